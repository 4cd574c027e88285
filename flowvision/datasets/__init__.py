"""flowvision.datasets: torchvision's datasets, reading the original on-disk formats without torch.

Every dataset is a :class:`VisionDataset` (a :class:`flowvision.backend.utils.data.Dataset`) returning PIL
images and Python/numpy targets, so it feeds flowvision's DataLoader and torch's alike. ``download=True``
fetches through :mod:`flowvision.hub`'s downloader (md5-verified, resumable, atomic) and extracts archives
safely; see ``docs/datasets.md`` for the list and the differences from torchvision.
"""
from ._tv2_wrapper import wrap_dataset_for_transforms_v2
from .caltech import Caltech101, Caltech256
from .captions_misc import CLEVRClassification, Flickr8k, Flickr30k, MovingMNIST
from .celeba import CelebA
from .cifar import CIFAR10, CIFAR100
from .coco import CocoCaptions, CocoDetection
from .detection import Kitti, WIDERFace
from .fakedata import FakeData
from .fine_grained import (DTD, FER2013, GTSRB, SUN397, Country211, EuroSAT, FGVCAircraft, Food101, Imagenette,
                           OxfordIIITPet, RenderedSST2)
from .flowers_cars import Flowers102, StanfordCars
from .folder import DatasetFolder, ImageFolder
from .imagenet import ImageNet
from .lfw import LFWPairs, LFWPeople
from .lsun import LSUN, LSUNClass
from .mnist import EMNIST, KMNIST, MNIST, QMNIST, FashionMNIST
from .omniglot import Omniglot
from .optical_flow import HD1K, FlyingChairs, FlyingThings3D, KittiFlow, Sintel
from .pcam import PCAM
from .places_inat import INaturalist, Places365
from .sbu_phototour import SBU, PhotoTour
from .segmentation import Cityscapes, SBDataset
from .stereo import (CarlaStereo, CREStereo, ETH3DStereo, FallingThingsStereo, InStereo2k, Kitti2012Stereo,
                     Kitti2015Stereo, Middlebury2014Stereo, SceneFlowStereo, SintelStereo)
from .stl10 import STL10
from .svhn import SVHN
from .usps import SEMEION, USPS
from .vision import StandardTransform, VisionDataset
from .voc import VOCDetection, VOCSegmentation
from . import utils  # noqa: F401

__all__ = [
    "VisionDataset", "StandardTransform", "DatasetFolder", "ImageFolder", "FakeData",
    "MNIST", "FashionMNIST", "KMNIST", "EMNIST", "QMNIST", "CIFAR10", "CIFAR100", "SVHN", "STL10", "USPS",
    "SEMEION", "ImageNet", "VOCDetection", "VOCSegmentation", "CocoDetection", "CocoCaptions",
    "Food101", "DTD", "FGVCAircraft", "SUN397", "GTSRB", "FER2013", "OxfordIIITPet", "RenderedSST2", "Imagenette",
    "EuroSAT", "Country211", "Flowers102", "StanfordCars", "Caltech101", "Caltech256", "CelebA", "LFWPeople",
    "LFWPairs", "Omniglot", "Places365", "INaturalist", "PCAM", "Cityscapes",
    "SBDataset", "Kitti", "WIDERFace", "Flickr8k", "Flickr30k", "CLEVRClassification", "MovingMNIST", "SBU",
    "PhotoTour", "Sintel", "KittiFlow", "FlyingChairs", "FlyingThings3D", "HD1K", "LSUN",
    "LSUNClass", "CarlaStereo", "Kitti2012Stereo", "Kitti2015Stereo", "Middlebury2014Stereo", "CREStereo",
    "FallingThingsStereo", "SceneFlowStereo", "SintelStereo", "InStereo2k", "ETH3DStereo", "wrap_dataset_for_transforms_v2",
]
