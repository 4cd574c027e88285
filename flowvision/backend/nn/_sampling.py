"""``affine_grid`` and ``grid_sample`` composed from differentiable ops (matmul, gather, arithmetic).

Gradients flow to both the input (through ``gather``) and the grid (through the interpolation weights), as in
torch. Attached to ``nn.functional`` by ``nn/__init__.py``.
"""
from __future__ import annotations

from .. import _autocast_policy as _amp
from .. import _creation as C
from .._tensor import Tensor


def _base_coords(n: int, align_corners: bool, like: Tensor) -> Tensor:
    if n <= 1:
        return C.zeros(max(n, 1), dtype=like.dtype)
    lin = C.linspace(-1.0, 1.0, n, dtype=like.dtype)
    return lin if align_corners else lin * ((n - 1) / n)


def affine_grid(theta: Tensor, size, align_corners: bool = False) -> Tensor:
    """Sampling grid (N, H, W, 2) for the 2-D affine matrices ``theta`` (N, 2, 3) and output ``size``."""
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = tuple(size)
    if len(size) != 4:
        raise NotImplementedError("affine_grid only supports 4D sizes (2-D grids), got size " + str(list(size)))
    if theta.ndim != 3 or tuple(theta.shape[1:]) != (2, 3):
        raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {list(size)}. "
                         f"Got {list(theta.shape)}.")
    n, _, h, w = size
    if theta.shape[0] != n:
        raise ValueError(f"theta batch {theta.shape[0]} does not match size batch {n}")
    from .._ops.shape import stack
    xs = _base_coords(w, align_corners, theta).reshape(1, w).expand(h, w)
    ys = _base_coords(h, align_corners, theta).reshape(h, 1).expand(h, w)
    base = stack([xs, ys, C.ones(h, w, dtype=theta.dtype)], -1).reshape(1, h * w, 3)
    return (base @ theta.transpose(1, 2)).reshape(n, h, w, 2)


def _unnormalize(coord: Tensor, size: int, align_corners: bool) -> Tensor:
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _reflect(coord: Tensor, twice_low: int, twice_high: int) -> Tensor:
    """Reflect coordinates into [twice_low/2, twice_high/2] (torch's reflect_coordinates)."""
    if twice_low == twice_high:
        return coord * 0
    mn = twice_low / 2
    span = (twice_high - twice_low) / 2
    c = (coord - mn).abs()
    extra = c.remainder(span)
    flips = (c / span).floor()
    even = flips.remainder(2) == 0
    from .._ops.elementwise import where
    return where(even, extra + mn, span - extra + mn)


def _source_index(coord, size, padding_mode, align_corners):
    x = _unnormalize(coord, size, align_corners)
    if padding_mode == "border":
        x = x.clamp(0, size - 1)
    elif padding_mode == "reflection":
        x = _reflect(x, 0, 2 * (size - 1)) if align_corners else _reflect(x, -1, 2 * size - 1)
        x = x.clamp(0, size - 1)
    return x


@_amp.fp32
def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool | None = None) -> Tensor:
    """Sample ``input`` (N, C, H, W) at ``grid`` (N, Ho, Wo, 2) locations in [-1, 1] -> (N, C, Ho, Wo).

    ``mode`` "bilinear" or "nearest"; ``padding_mode`` "zeros", "border" or "reflection"; ``align_corners``
    defaults to False as in torch.
    """
    if mode not in ("bilinear", "nearest"):
        raise NotImplementedError(f"grid_sample mode {mode!r} is not supported (bilinear, nearest)")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if input.ndim != 4 or grid.ndim != 4 or grid.shape[-1] != 2:
        raise RuntimeError(f"grid_sample(): expected 4D input and a (N, H, W, 2) grid, got input of shape "
                           f"{list(input.shape)} and grid of shape {list(grid.shape)}")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sample(): expected grid and input to have same batch size, but got input with "
                           f"sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    align_corners = bool(align_corners)
    n, c, h, w = input.shape
    ho, wo = grid.shape[1], grid.shape[2]
    grid = grid.to(input.dtype)
    ix = _source_index(grid[..., 0], w, padding_mode, align_corners)
    iy = _source_index(grid[..., 1], h, padding_mode, align_corners)
    flat = input.reshape(n, c, h * w)

    def tap(xi: Tensor, yi: Tensor) -> Tensor:
        """input at integer (xi, yi) with zeros outside, as (N, C, Ho, Wo); xi/yi carry no gradient."""
        inside = ((xi >= 0) & (xi <= w - 1) & (yi >= 0) & (yi <= h - 1))
        idx = (yi.clamp(0, h - 1) * w + xi.clamp(0, w - 1)).long().reshape(n, 1, ho * wo).expand(n, c, ho * wo)
        vals = flat.gather(2, idx).reshape(n, c, ho, wo)
        return vals * inside.to(input.dtype).unsqueeze(1)

    if mode == "nearest":
        # round half to even, like torch's nearbyint
        return tap(ix.detach().round(), iy.detach().round())
    x0, y0 = ix.detach().floor(), iy.detach().floor()
    x1, y1 = x0 + 1, y0 + 1
    wx1, wy1 = ix - x0, iy - y0
    wx0, wy0 = 1 - wx1, 1 - wy1
    return (tap(x0, y0) * (wx0 * wy0).unsqueeze(1) + tap(x1, y0) * (wx1 * wy0).unsqueeze(1)
            + tap(x0, y1) * (wx0 * wy1).unsqueeze(1) + tap(x1, y1) * (wx1 * wy1).unsqueeze(1))
