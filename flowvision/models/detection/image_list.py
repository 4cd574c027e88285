"""ImageList: a padded batch plus the size of each image before padding."""

__all__ = ["ImageList"]


class ImageList:
    def __init__(self, tensors, image_sizes):
        self.tensors = tensors
        self.image_sizes = image_sizes

    def to(self, device):
        return ImageList(self.tensors.to(device), self.image_sizes)
