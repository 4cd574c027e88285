"""All nn layer classes (re-exported by ``flowvision.backend.nn``)."""
from .module import Module, register_module_forward_hook, register_module_forward_pre_hook  # noqa: F401
from .container import Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict, Container  # noqa: F401
from .linear import Identity, Linear, Bilinear, NonDynamicallyQuantizableLinear  # noqa: F401
from .conv import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d  # noqa: F401
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d, SyncBatchNorm  # noqa: F401
from .normalization import LayerNorm, GroupNorm, InstanceNorm1d, InstanceNorm2d, RMSNorm  # noqa: F401
from .activation import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .dropout import Dropout, Dropout1d, Dropout2d, Dropout3d, AlphaDropout  # noqa: F401
from .loss import *  # noqa: F401,F403
from .padding import *  # noqa: F401,F403
from .pixelshuffle import PixelShuffle, PixelUnshuffle  # noqa: F401
from .sparse import Embedding  # noqa: F401
from .upsampling import Upsample, UpsamplingNearest2d, UpsamplingBilinear2d  # noqa: F401
from .flatten import Flatten, Unflatten  # noqa: F401
from .transformer import (  # noqa: F401
    MultiheadAttention, TransformerEncoderLayer, TransformerEncoder, TransformerDecoderLayer, TransformerDecoder,
    Transformer,
)
from .rnn import RNNBase, RNN, LSTM, GRU, RNNCellBase, RNNCell, LSTMCell, GRUCell  # noqa: F401
from .extra import LocalResponseNorm, CosineSimilarity, PairwiseDistance, Unfold, Fold, ChannelShuffle  # noqa: F401
