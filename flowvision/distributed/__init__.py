"""Scaling out with existing engines: ``flowvision.distributed.ray`` (batch inference on Ray Data).

Data-parallel training over MPI lives with the engine: ``flowvision.backend.distributed`` (collectives) and
``flowvision.backend.nn.parallel.DistributedDataParallel``.
"""
