"""The connected DSP: the device-agent wire protocol, its client and the simulator's agent."""
