"""torchvision.io equivalents: image files <-> uint8 (C, H, W) flowvision.backend tensors."""
from .image import (ImageReadMode, decode_gif, decode_image, decode_jpeg, decode_png, decode_webp, encode_jpeg,
                    encode_png, read_file, read_image, write_file, write_jpeg, write_png)
from .video import VideoReader, read_video, read_video_timestamps

__all__ = ["ImageReadMode", "read_file", "write_file", "decode_image", "read_image", "decode_jpeg", "decode_png",
           "decode_webp", "decode_gif", "encode_jpeg", "encode_png", "write_jpeg", "write_png", "read_video", "read_video_timestamps",
           "VideoReader"]
