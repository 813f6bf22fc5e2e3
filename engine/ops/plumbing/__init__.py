"""What every graph needs: INPUT, OUTPUT, Nop, Const, and Variable/Assign state."""
