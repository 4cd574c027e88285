"""Dynamic batching: requests that arrive within ``max_delay`` are run as one model call of up to ``max_batch``.

One asyncio task collects items from a bounded queue and hands each batch to a single inference thread, so
the event loop keeps accepting and answering requests while the kernels (which release the GIL) run.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import time
from typing import Any, Callable, List, Optional, Sequence


class QueueFull(RuntimeError):
    """The batcher's queue is at its bound: the caller should answer 503 with ``Retry-After``."""


class ShuttingDown(RuntimeError):
    """The batcher no longer accepts work."""


class _Item:
    __slots__ = ("value", "future", "enqueued")

    def __init__(self, value: Any, future: asyncio.Future):
        self.value = value
        self.future = future
        self.enqueued = time.perf_counter()


class DynamicBatcher:
    """Stack concurrent single-sample calls into batches.

    Args:
        run_batch: ``run_batch(values) -> results`` (same length), called in the inference thread.
        max_batch: the most items in one call.
        max_delay_s: how long the first item of a batch waits for more to arrive.
        max_queue: the most items waiting; ``submit`` raises :class:`QueueFull` beyond it.
        on_batch: optional ``on_batch(size, seconds)`` callback after each call (metrics).
    """

    def __init__(self, run_batch: Callable[[Sequence[Any]], List[Any]], max_batch: int = 8,
                 max_delay_s: float = 0.005, max_queue: int = 64,
                 on_batch: Optional[Callable[[int, float], None]] = None):
        if max_batch < 1 or max_queue < 1 or max_delay_s < 0:
            raise ValueError("max_batch and max_queue must be >= 1 and max_delay_s >= 0")
        self.run_batch = run_batch
        self.max_batch = int(max_batch)
        self.max_delay_s = float(max_delay_s)
        self.max_queue = int(max_queue)
        self.on_batch = on_batch
        self._queue: Optional[asyncio.Queue] = None
        self._task: Optional[asyncio.Task] = None
        self._executor = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="fv-infer")
        self._closing = False
        self._busy = 0  # items handed to the inference thread and not answered yet

    @property
    def depth(self) -> int:
        """Items waiting in the queue (not yet in a running batch)."""
        return self._queue.qsize() if self._queue is not None else 0

    def start(self) -> None:
        """Start the collector task on the running event loop."""
        self._queue = asyncio.Queue(maxsize=self.max_queue)
        self._task = asyncio.get_running_loop().create_task(self._collect(), name="fv-batcher")

    def free_slots(self) -> int:
        """How many more items the queue accepts now."""
        return self.max_queue - self.depth

    def enqueue(self, value: Any) -> asyncio.Future:
        """Queue one item (synchronously, so several items of one request go in together); await the future."""
        if self._closing or self._queue is None:
            raise ShuttingDown("the server is shutting down")
        fut = asyncio.get_running_loop().create_future()
        try:
            self._queue.put_nowait(_Item(value, fut))
        except asyncio.QueueFull:
            raise QueueFull(f"the inference queue is full ({self.max_queue} images waiting)") from None
        return fut

    async def submit(self, value: Any) -> Any:
        """Queue one item and wait for its result (cancel the await to give up on it)."""
        return await self.enqueue(value)

    async def _collect(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            batch = [await self._queue.get()]
            self._busy += 1  # taken items count as in flight from here, so close() waits for them
            try:
                deadline = loop.time() + self.max_delay_s
                while len(batch) < self.max_batch:
                    timeout = deadline - loop.time()
                    try:
                        batch.append(self._queue.get_nowait() if timeout <= 0 else
                                     await asyncio.wait_for(self._queue.get(), timeout))
                    except (asyncio.QueueEmpty, asyncio.TimeoutError):
                        break
                    self._busy += 1
                await self._run(loop, batch)
            except asyncio.CancelledError:
                for it in batch:
                    if not it.future.done():
                        it.future.set_exception(ShuttingDown("the server stopped before this request ran"))
                raise
            finally:
                self._busy -= len(batch)

    async def _run(self, loop, batch) -> None:
        live = [it for it in batch if not it.future.done()]  # timed out or cancelled while queued
        if not live:
            return
        t0 = time.perf_counter()
        try:
            results = await loop.run_in_executor(self._executor, self.run_batch, [it.value for it in live])
            if len(results) != len(live):
                raise RuntimeError(f"run_batch returned {len(results)} results for {len(live)} inputs")
        except Exception as e:  # noqa: BLE001 -- one failed batch answers its own requests, never the loop
            for it in live:
                if not it.future.done():
                    it.future.set_exception(e)
        else:
            for it, r in zip(live, results):
                if not it.future.done():
                    it.future.set_result(r)
        if self.on_batch is not None:
            self.on_batch(len(live), time.perf_counter() - t0)

    async def close(self, drain_timeout_s: float = 30.0) -> None:
        """Refuse new items, finish the queued and running ones (up to ``drain_timeout_s``), stop."""
        self._closing = True
        loop = asyncio.get_running_loop()
        end = loop.time() + drain_timeout_s
        while (self.depth or self._busy) and loop.time() < end:
            await asyncio.sleep(0.01)
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
        self._executor.shutdown(wait=True)
