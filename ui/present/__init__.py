"""The presenter's tools: the walkthrough, the offline deck and the audience QR code."""
