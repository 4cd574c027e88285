"""Class attention (CaiT, and FAN's class-attention blocks): the class token alone queries every token."""
from flowvision.backend import nn
from flowvision.backend.nn import functional as F


class ClassAttn(nn.Module):
    """Attention of the class token (query) over [class token, patch tokens] (keys, values); returns the updated
    class token, shape (B, 1, C). timm's parameter names (``q``, ``k``, ``v``, ``proj``)."""

    def __init__(self, dim: int, num_heads: int = 8, qkv_bias: bool = False, attn_drop: float = 0.0,
                 proj_drop: float = 0.0):
        super().__init__()
        self.num_heads = num_heads
        self.q = nn.Linear(dim, dim, bias=qkv_bias)
        self.k = nn.Linear(dim, dim, bias=qkv_bias)
        self.v = nn.Linear(dim, dim, bias=qkv_bias)
        self.attn_drop = nn.Dropout(attn_drop)
        self.proj = nn.Linear(dim, dim)
        self.proj_drop = nn.Dropout(proj_drop)

    def forward(self, x):
        b, n, c = x.shape
        nh = self.num_heads
        q = self.q(x[:, :1]).reshape(b, 1, nh, c // nh).transpose(1, 2)
        k = self.k(x).reshape(b, n, nh, c // nh).transpose(1, 2)
        v = self.v(x).reshape(b, n, nh, c // nh).transpose(1, 2)
        x_cls = F.scaled_dot_product_attention(q, k, v, dropout_p=self.attn_drop.p if self.training else 0.0)
        return self.proj_drop(self.proj(x_cls.transpose(1, 2).reshape(b, 1, c)))
