"""Drop-in harness: run torch/torchvision scripts on flowvision with only their import lines changed."""
