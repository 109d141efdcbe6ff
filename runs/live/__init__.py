"""The live channel: what a run's websocket tells the browser, and who may keep listening."""
