"""The Teams adapter: translates Teams events into bot Turns and Replies into Teams messages."""
