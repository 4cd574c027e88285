"""Prometheus metrics of the server (``GET /metrics``), on ``prometheus_client``.

Each app owns its registry, so several apps in one process (tests) never collide. With several uvicorn
workers (``$PROMETHEUS_MULTIPROC_DIR`` set by ``flowvision serve --workers N``) the values are written to that
directory by every worker and ``render`` sums them across processes.
"""
from __future__ import annotations

import os
from typing import Tuple

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 10.0, 30.0)
BATCH_BUCKETS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)


class Metrics:
    """The counters, histograms and gauges the server updates."""

    def __init__(self):
        self.multiprocess = bool(os.environ.get("PROMETHEUS_MULTIPROC_DIR"))
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter("flowvision_requests", "Prediction requests by model and HTTP status",
                                ["model", "status"], registry=r)
        self.images = Counter("flowvision_images", "Images queued for inference", ["model"], registry=r)
        self.errors = Counter("flowvision_errors", "Failed prediction requests by model and error code",
                              ["model", "code"], registry=r)
        self.latency = Histogram("flowvision_request_latency_seconds", "Prediction request latency, end to end",
                                 ["model"], buckets=LATENCY_BUCKETS, registry=r)
        self.inference_seconds = Histogram("flowvision_batch_inference_seconds", "Model time per batch",
                                           ["model"], buckets=LATENCY_BUCKETS, registry=r)
        self.batch_size = Histogram("flowvision_batch_size", "Images per model call (dynamic batching)",
                                    ["model"], buckets=BATCH_BUCKETS, registry=r)
        gauge_kw = {"multiprocess_mode": "livesum"} if self.multiprocess else {}
        self.queue_depth = Gauge("flowvision_queue_depth", "Images waiting for a batch", ["model"], registry=r,
                                 **gauge_kw)

    def render(self) -> Tuple[bytes, str]:
        """The Prometheus text exposition and its content type."""
        if self.multiprocess:
            from prometheus_client import multiprocess
            registry = CollectorRegistry()
            multiprocess.MultiProcessCollector(registry)
            return generate_latest(registry), CONTENT_TYPE_LATEST
        return generate_latest(self.registry), CONTENT_TYPE_LATEST
