"""The implementations behind ``flowvision.backend.nn.functional``, one module per concern (import from there)."""
