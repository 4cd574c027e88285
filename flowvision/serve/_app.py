"""The FastAPI application: endpoints, limits, errors, Prometheus metrics and the lifespan of the models."""
from __future__ import annotations

import asyncio
import base64
import binascii
import json
import logging
import os
import time
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass, field
from importlib import resources
from typing import Any, Dict, List, Optional

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from ._batcher import DynamicBatcher, QueueFull, ShuttingDown
from ._metrics import Metrics
from ._predictor import BadImage, ImageTooLarge, ModelSpec, Predictor, decode_image

logger = logging.getLogger("uvicorn.error")  # uvicorn configures this one; our lines join its log
CONFIG_ENV = "FLOWVISION_SERVE_CONFIG"


@dataclass
class ServeConfig:
    """Everything ``flowvision serve`` takes; the defaults are the CLI's."""
    models: List[ModelSpec] = field(default_factory=lambda: [ModelSpec("tf_efficientnet_lite0")])
    max_batch: int = 8
    max_delay_ms: float = 5.0
    max_queue: int = 64
    timeout_s: float = 30.0
    max_body_mb: float = 20.0
    max_pixels: int = 40_000_000
    max_images: int = 32
    threads: Optional[int] = None

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> "ServeConfig":
        d = json.loads(text)
        d["models"] = [ModelSpec(**m) for m in d["models"]]
        return cls(**d)


class ApiError(Exception):
    """An error answered as ``{"error": {"code", "message"}}`` with ``status``."""

    def __init__(self, status: int, code: str, message: str, headers: Optional[Dict[str, str]] = None):
        super().__init__(message)
        self.status, self.code, self.message, self.headers = status, code, message, headers


def _error_response(status: int, code: str, message: str, headers=None) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status, headers=headers)


class BodyLimit:
    """ASGI middleware: answer 413 to request bodies over ``max_bytes`` before the app parses any of them.

    A declared Content-Length is checked up front; a chunked body is counted while it is read and the whole
    body is then replayed to the app, so multipart parsing never sees more than the limit.
    """

    def __init__(self, app, max_bytes: int):
        self.app = app
        self.max_bytes = int(max_bytes)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"] not in ("POST", "PUT", "PATCH"):
            return await self.app(scope, receive, send)
        too_big = _error_response(413, "body_too_large", f"request body is over this server's limit of "
                                  f"{self.max_bytes} bytes", headers={"Connection": "close"})
        length = dict(scope.get("headers") or []).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_bytes:
            return await too_big(scope, receive, send)
        chunks, size = [], 0
        while True:
            msg = await receive()
            if msg["type"] == "http.disconnect":
                return
            body = msg.get("body", b"")
            size += len(body)
            if size > self.max_bytes:
                return await too_big(scope, receive, send)
            chunks.append(body)
            if not msg.get("more_body", False):
                break
        replay = [{"type": "http.request", "body": b"".join(chunks), "more_body": False}]

        async def replay_receive():
            return replay.pop() if replay else await receive()

        return await self.app(scope, replay_receive, send)


def _decode_b64(s: Any, i: int) -> bytes:
    if not isinstance(s, str):
        raise ApiError(400, "bad_request", f"images[{i}] must be a base64 string, got {type(s).__name__}")
    if s.startswith("data:"):  # a data URL: data:image/png;base64,....
        s = s.split(",", 1)[-1]
    try:
        return base64.b64decode(s, validate=True)
    except (binascii.Error, ValueError):
        raise ApiError(400, "bad_base64", f"images[{i}] is not valid base64") from None


_PARAMS = ("model", "topk", "score_threshold", "timeout_s")


async def _read_request(request: Request) -> Dict[str, Any]:
    """``{"images": [bytes], "model", "topk", "score_threshold", "timeout_s"}`` from a multipart/JSON body."""
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    params: Dict[str, Any] = dict(request.query_params)
    if ctype == "multipart/form-data":
        try:
            form = await request.form(max_files=1000, max_fields=100)
        except Exception as e:  # noqa: BLE001 -- python-multipart raises several types on malformed bodies
            raise ApiError(400, "bad_multipart", f"malformed multipart body: {e}") from None
        images = []
        for key, value in form.multi_items():
            if hasattr(value, "read"):
                images.append(await value.read())
            elif key in _PARAMS:
                params[key] = value
    elif ctype == "application/json":
        try:
            body = json.loads(await request.body())
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise ApiError(400, "bad_json", f"malformed JSON body: {e}") from None
        if not isinstance(body, dict):
            raise ApiError(400, "bad_json", "the JSON body must be an object like {\"images\": [\"<base64>\"]}")
        raw = body.get("images", [body["image"]] if "image" in body else None)
        if not isinstance(raw, list):
            raise ApiError(400, "bad_request", "the JSON body needs \"images\": [base64, ...] or \"image\": base64")
        images = [_decode_b64(s, i) for i, s in enumerate(raw)]
        params.update({k: body[k] for k in _PARAMS if k in body})
    else:
        raise ApiError(415, "unsupported_media_type", f"Content-Type {ctype or '(none)'!r} is not supported: send "
                       "multipart/form-data with image file fields or application/json with base64 images")
    params["images"] = images
    return params


def _number(params, key, default, cast):
    value = params.get(key, default)
    try:
        return cast(value)
    except (TypeError, ValueError):
        raise ApiError(400, "bad_request", f"{key} must be a number, got {value!r}") from None


def _static_page() -> str:
    return resources.files("flowvision.serve").joinpath("static", "index.html").read_text(encoding="utf-8")


def create_app(config: Optional[ServeConfig] = None) -> FastAPI:
    """The server application for ``config`` (models load at startup, before the first request).

    Args:
        config: models and limits; the CLI defaults when None.

    Returns:
        A FastAPI (ASGI) app, e.g. for ``uvicorn.run(app)``.
    """
    config = config or ServeConfig()
    metrics = Metrics()
    state: Dict[str, Any] = {"predictors": {}, "batchers": {}, "ready": False}

    @asynccontextmanager
    async def lifespan(app):
        if config.threads:
            from flowvision import backend as flow
            flow.set_num_threads(int(config.threads))
        for spec in config.models:
            t0 = time.perf_counter()
            pred = await asyncio.get_running_loop().run_in_executor(None, Predictor, spec, config.max_batch)
            logger.info("loaded %s (%s) in %.1f s, batch plans %s", spec.name, pred.task,
                        time.perf_counter() - t0, pred.plan_sizes)
            name = spec.name

            def on_batch(size, seconds, name=name):
                metrics.queue_depth.labels(name).set(state["batchers"][name].depth)
                metrics.batch_size.labels(name).observe(size)
                metrics.inference_seconds.labels(name).observe(seconds)

            batcher = DynamicBatcher(pred.run, max_batch=config.max_batch, max_delay_s=config.max_delay_ms / 1000,
                                     max_queue=config.max_queue, on_batch=on_batch)
            batcher.start()
            state["predictors"][name] = pred
            state["batchers"][name] = batcher
        state["ready"] = True
        try:
            yield
        finally:  # uvicorn has stopped accepting and finished the in-flight requests when this runs
            state["ready"] = False
            for b in state["batchers"].values():
                await b.close(drain_timeout_s=config.timeout_s)

    app = FastAPI(title="flowvision serve", lifespan=lifespan, docs_url="/docs", redoc_url=None)
    app.add_middleware(BodyLimit, max_bytes=int(config.max_body_mb * 1024 * 1024))

    @app.exception_handler(ApiError)
    async def _api_error(request, exc: ApiError):
        return _error_response(exc.status, exc.code, exc.message, exc.headers)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request, exc):
        return _error_response(exc.status_code, "http_error", str(exc.detail))

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request, exc):
        return _error_response(422, "invalid_request", str(exc.errors()))

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def index():
        return HTMLResponse(_static_page())

    @app.get("/healthz")
    async def healthz():
        if not state["ready"]:
            return _error_response(503, "not_ready", "models are loading or the server is stopping")
        return {"status": "ok", "models": list(state["predictors"])}

    @app.get("/v1/models")
    async def models():
        return {"models": [p.describe() for p in state["predictors"].values()]}

    @app.get("/metrics")
    async def metrics_endpoint():
        body, ctype = metrics.render()
        return Response(body, media_type=ctype)

    @app.post("/v1/predict")
    async def predict(request: Request):
        t0 = time.perf_counter()
        name = "?"
        status = 500
        try:
            params = await _read_request(request)
            name = str(params.get("model") or config.models[0].name)
            pred = state["predictors"].get(name)
            if pred is None:
                name = "?"
                raise ApiError(404, "unknown_model", f"model {params.get('model')!r} is not served here; served: "
                               f"{', '.join(state['predictors'])}")
            images = params["images"]
            if not images:
                raise ApiError(400, "no_image", "the request holds no image")
            if len(images) > config.max_images:
                raise ApiError(413, "too_many_images", f"{len(images)} images in one request; the limit is "
                               f"{config.max_images}")
            topk = _number(params, "topk", 5, int)
            thresh = _number(params, "score_threshold", 0.0, float)
            # a client may ask for a shorter deadline than the server's, never a longer one
            timeout = min(config.timeout_s, max(0.0, _number(params, "timeout_s", config.timeout_s, float)))
            body = await _predict(pred, state["batchers"][name], images, topk, thresh, timeout)
            body["latency_ms"] = round((time.perf_counter() - t0) * 1000, 3)
            status = 200
            return body
        except ApiError as e:
            status = e.status
            metrics.errors.labels(name, e.code).inc()
            raise
        except Exception:
            metrics.errors.labels(name, "internal").inc()
            logger.exception("prediction failed")
            raise ApiError(500, "internal", "the model failed on this request; see the server log") from None
        finally:
            metrics.requests.labels(name, str(status)).inc()
            metrics.latency.labels(name).observe(time.perf_counter() - t0)

    async def _predict(pred: Predictor, batcher: DynamicBatcher, images: List[bytes], topk: int, thresh: float,
                       timeout: float):
        loop = asyncio.get_running_loop()
        busy = ApiError(503, "queue_full", f"the server is busy ({batcher.max_queue} images queued); retry shortly",
                        headers={"Retry-After": "1"})
        if batcher.free_slots() < len(images):  # refuse before spending CPU on decoding
            raise busy

        def prepare(data: bytes):
            im = decode_image(data, config.max_pixels)
            return im.size, pred.preprocess(im)

        try:
            prepared = await asyncio.gather(*[loop.run_in_executor(None, prepare, d) for d in images])
        except BadImage as e:
            raise ApiError(400, "bad_image", str(e)) from None
        except ImageTooLarge as e:
            raise ApiError(413, "image_too_large", str(e)) from None
        if batcher.free_slots() < len(prepared):  # it may have filled up while these were decoded
            raise busy
        try:
            futures = [batcher.enqueue(x) for _, x in prepared]
        except (QueueFull, ShuttingDown) as e:
            raise ApiError(503, "unavailable", str(e), headers={"Retry-After": "1"}) from None
        metrics.images.labels(pred.name).inc(len(futures))
        metrics.queue_depth.labels(pred.name).set(batcher.depth)
        try:
            outputs = await asyncio.wait_for(asyncio.gather(*futures), timeout)
        except asyncio.TimeoutError:
            raise ApiError(504, "timeout", f"the prediction did not finish within {timeout:g} s") from None
        results = await loop.run_in_executor(
            None, lambda: [pred.format(o, size, topk, thresh) for o, (size, _) in zip(outputs, prepared)])
        return {"model": pred.name, "task": pred.task, "predictions": results}

    app.state.serve = state
    app.state.config = config
    return app


def app_from_env() -> FastAPI:
    """An app built from ``$FLOWVISION_SERVE_CONFIG`` (JSON): the factory each uvicorn worker process calls."""
    text = os.environ.get(CONFIG_ENV)
    if not text:
        raise RuntimeError(f"{CONFIG_ENV} is not set: start the server with `flowvision serve`")
    return create_app(ServeConfig.from_json(text))
