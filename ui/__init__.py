"""What the pages share: dials and URL sync, the current view, figure builders, formatting."""
