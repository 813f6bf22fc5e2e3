"""The user guide (Markdown), installed as ``hexscope.resources.guide`` so that Help ▸ User
guide reads it from the installed files (see pyproject.toml)."""
