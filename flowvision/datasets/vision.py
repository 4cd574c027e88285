"""``VisionDataset`` and ``StandardTransform``: the base contract of every dataset (torchvision's)."""
import os
from pathlib import Path
from typing import Any, Callable, List, Optional, Tuple, Union

from ..backend.utils.data import Dataset

__all__ = ["VisionDataset", "StandardTransform"]


class VisionDataset(Dataset):
    """Base class of the datasets: a root, and either ``transforms`` or ``transform``/``target_transform``.

    Args:
        root: the dataset's root directory (``~`` is expanded); ``None`` for generated datasets.
        transforms: a callable taking and returning ``(sample, target)``.
        transform: a callable applied to the sample (usually a PIL image).
        target_transform: a callable applied to the target.

    ``transforms`` and ``transform``/``target_transform`` are mutually exclusive; the pair is wrapped into a
    :class:`StandardTransform` stored as ``self.transforms``, so subclasses call ``self.transforms(img, target)``.
    """

    _repr_indent = 4

    def __init__(self, root: Union[str, Path, None] = None, transforms: Optional[Callable] = None,
                 transform: Optional[Callable] = None, target_transform: Optional[Callable] = None) -> None:
        if isinstance(root, str):
            root = os.path.expanduser(root)
        self.root = root
        has_transforms = transforms is not None
        has_separate_transform = transform is not None or target_transform is not None
        if has_transforms and has_separate_transform:
            raise ValueError("Only transforms or transform/target_transform can be passed as argument")
        self.transform = transform
        self.target_transform = target_transform
        if has_separate_transform:
            transforms = StandardTransform(transform, target_transform)
        self.transforms = transforms

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError

    def _apply_transforms(self, sample: Any, target: Any) -> Tuple[Any, Any]:
        """``(transform(sample), target_transform(target))``, each applied only when set.

        Reads ``self.transform`` / ``self.target_transform`` at call time (not the ``transforms`` wrapper built
        in ``__init__``), so reassigning either attribute after construction takes effect, as in torchvision.
        """
        return _apply_pair(self.transform, self.target_transform, sample, target)

    def _apply_joint_transforms(self, sample: Any, target: Any) -> Tuple[Any, Any]:
        """``transforms(sample, target)`` when ``transforms`` is set (as passed, or wrapping the separate pair)."""
        if self.transforms is not None:
            sample, target = self.transforms(sample, target)
        return sample, target

    def __len__(self) -> int:
        raise NotImplementedError

    def __repr__(self) -> str:
        head = "Dataset " + self.__class__.__name__
        body = [f"Number of datapoints: {self.__len__()}"]
        if self.root is not None:
            body.append(f"Root location: {self.root}")
        body += self.extra_repr().splitlines()
        if getattr(self, "transforms", None) is not None:
            body += [repr(self.transforms)]
        return "\n".join([head] + [" " * self._repr_indent + line for line in body])

    def _format_transform_repr(self, transform: Callable, head: str) -> List[str]:
        return _format_transform_repr(transform, head)

    def extra_repr(self) -> str:
        """Extra lines of ``repr`` (the split, ...); subclasses override it."""
        return ""


def _apply_pair(transform: Optional[Callable], target_transform: Optional[Callable], sample: Any,
                target: Any) -> Tuple[Any, Any]:
    if transform is not None:
        sample = transform(sample)
    if target_transform is not None:
        target = target_transform(target)
    return sample, target


def _format_transform_repr(transform: Callable, head: str) -> List[str]:
    lines = repr(transform).splitlines()
    return [f"{head}{lines[0]}"] + [" " * len(head) + line for line in lines[1:]]


class StandardTransform:
    """Apply ``transform`` to the sample and ``target_transform`` to the target."""

    def __init__(self, transform: Optional[Callable] = None, target_transform: Optional[Callable] = None) -> None:
        self.transform = transform
        self.target_transform = target_transform

    def __call__(self, input: Any, target: Any) -> Tuple[Any, Any]:
        return _apply_pair(self.transform, self.target_transform, input, target)

    def _format_transform_repr(self, transform: Callable, head: str) -> List[str]:
        return _format_transform_repr(transform, head)

    def __repr__(self) -> str:
        body = [self.__class__.__name__]
        if self.transform is not None:
            body += _format_transform_repr(self.transform, "Transform: ")
        if self.target_transform is not None:
            body += _format_transform_repr(self.target_transform, "Target transform: ")
        return "\n".join(body)
