"""The simulator's GPU mode on the wire: a BatchEngine paced against real time, and the
replies it paces (docs/simulator.md, *GPU mode*).

One scheduler task runs the engine: it computes iterations ahead up to a few real
milliseconds, sleeps until the simulated clock's moment (simulated seconds / time_scale),
then wakes the requests whose tokens are due. A streamed request writes one SSE event per
token, all its due events in one socket write; a plain one is answered when its last token
is decoded. A client that has gone (closed transport, failed write) is cancelled at the
next wake: its slot frees at once and its remaining tokens are never decoded.
"""
from __future__ import annotations

import asyncio
import json
import time

from aiohttp import web

from resolver.sim.gpu import BatchEngine, GpuModel, GpuStats, Sequence
from resolver.sim.profiles import Answer, token_pieces

__all__ = ["GpuServing", "StreamEvents", "gpu_reply"]

LOOKAHEAD_S = 0.005        # real seconds of iterations computed per wake (coalesces writes)
MAX_ITERATIONS = 256       # per wake, so a scheduler behind real time still lets handlers run


class Ticket:
    """A request's side of a Sequence: how it is woken and how to tell its client left."""

    __slots__ = ("event", "request", "stream")

    def __init__(self, request: web.Request, stream: bool):
        self.event = asyncio.Event()
        self.request = request
        self.stream = stream

    def gone(self) -> bool:
        transport = self.request.transport
        return transport is None or transport.is_closing()


class GpuServing:
    """The live engine of one server; `time_scale` simulated seconds pass per real second."""

    def __init__(self, model: GpuModel, max_batch: int, time_scale: float = 1.0):
        self.engine = BatchEngine(model, max_batch)
        self.time_scale = time_scale
        self._t0 = time.monotonic()
        self._wall_origin = 0.0
        self._first_arrival: float | None = None   # simulated time of the first request since a reset
        self._last_end = 0.0                       # the engine's clock when it last went idle
        self._wake: asyncio.Event | None = None
        self._task: asyncio.Task | None = None

    def sim_now(self) -> float:
        return (time.monotonic() - self._t0) * self.time_scale

    def submit(self, seq: Sequence) -> None:
        if self._task is None:       # the first request: the scheduler joins the server's loop
            self._wake = asyncio.Event()
            self._task = asyncio.get_running_loop().create_task(self._schedule())
        if self.engine.idle:
            self.engine.clock = max(self.engine.clock, self.sim_now())
        if self._first_arrival is None:
            self._first_arrival = self.engine.clock
        self.engine.submit(seq)
        assert self._wake is not None
        self._wake.set()

    def cancel(self, seq: Sequence) -> None:
        self.engine.cancel(seq)

    async def close(self) -> None:
        """End the scheduler task (the server is shutting down)."""
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None

    async def _schedule(self) -> None:
        engine = self.engine
        assert self._wake is not None
        while True:
            if engine.idle:
                self._last_end = engine.clock
                self._wake.clear()
                await self._wake.wait()
                continue
            self._drop_gone()
            done: list[Sequence] = []
            horizon = self.sim_now() + LOOKAHEAD_S * self.time_scale
            for _ in range(MAX_ITERATIONS):
                if engine.idle or engine.clock >= horizon:
                    break
                done += engine.iterate()
            delay = (engine.clock - self.sim_now()) / self.time_scale
            await asyncio.sleep(max(0.0, delay))
            for seq in done:
                seq.owner.event.set()
            for seq in engine.running:
                if seq.owner.stream:
                    seq.owner.event.set()

    def _drop_gone(self) -> None:
        for seq in [*self.engine.running, *self.engine.waiting]:
            if not seq.cancelled and seq.owner.gone():
                self.engine.cancel(seq)
                seq.owner.event.set()

    def stats_json(self) -> dict:
        s = self.engine.stats
        wall = max(self.engine.clock, self.sim_now()) - self._wall_origin
        # first request to the end of the last decoded token (the work itself, not idle time around it)
        end = self.engine.clock if not self.engine.idle else self._last_end
        span = 0.0 if self._first_arrival is None else max(0.0, end - self._first_arrival)
        return {"model": self.engine.model.name, "max_batch": self.engine.max_batch,
                "time_scale": self.time_scale, "busy_seconds": round(s.busy_seconds, 6),
                "prefill_seconds": round(s.prefill_seconds, 6), "wall_seconds": round(wall, 6),
                "span_seconds": round(span, 6),
                "tokens_generated": s.tokens_generated, "prompt_tokens": s.prompt_tokens,
                "max_sequences": s.max_sequences, "decode_steps": s.decode_steps, "cancelled": s.cancelled,
                "running": len(self.engine.running), "waiting": len(self.engine.waiting)}

    def reset_stats(self) -> None:
        self.engine.stats = GpuStats(max_sequences=len(self.engine.running))
        self._wall_origin = max(self.engine.clock, self.sim_now())
        self._first_arrival = None if self.engine.idle else self.engine.clock


class StreamEvents:
    """The SSE events of one streamed completion, built from pre-serialised halves (one
    event per token must stay cheap): the same JSON a json.dumps of each chunk gives."""

    DONE = b"data: [DONE]\n\n"

    def __init__(self, model: str, completion_id: str, created: int):
        self.base = {"id": completion_id, "object": "chat.completion.chunk", "created": created, "model": model}
        self._halves: dict[str, tuple[bytes, bytes]] = {}

    def chunk(self, obj: dict) -> bytes:
        return b"data: " + json.dumps({**self.base, **obj}).encode() + b"\n\n"

    def event(self, delta: dict, finish: str | None = None) -> bytes:
        return self.chunk({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    def delta(self, field: str, piece: str) -> bytes:
        halves = self._halves.get(field)
        if halves is None:
            marker = "\x00piece\x00"
            head, tail = self.event({field: marker}).split(json.dumps(marker).encode())
            halves = self._halves[field] = (head, tail)
        return halves[0] + json.dumps(piece).encode() + halves[1]

    def ending(self, finish_reason: str, usage: dict | None) -> bytes:
        """The finish chunk, the usage chunk when asked for, [DONE]."""
        out = self.event({}, finish_reason)
        if usage is not None:
            out += self.chunk({"choices": [], "usage": usage})
        return out + self.DONE


async def gpu_reply(serving: GpuServing, request: web.Request, body: dict, answer: Answer, usage: dict,
                    completion: dict, think_style: str) -> web.StreamResponse:
    """Decode `answer` in the engine and reply at its pace (plain: `completion` at the end)."""
    pieces = [(think_style, p) for p in token_pieces(answer.reasoning)]
    pieces += [("content", p) for p in token_pieces(answer.content)]
    stream = bool(body.get("stream"))
    ticket = Ticket(request, stream)
    seq = Sequence(usage["prompt_tokens"], len(pieces), owner=ticket)
    if not stream:
        serving.submit(seq)
        try:
            while not (seq.finished or seq.cancelled):
                await ticket.event.wait()
                ticket.event.clear()
        except asyncio.CancelledError:
            serving.cancel(seq)
            raise
        if seq.cancelled:
            return web.Response(status=499)     # nobody is there to read it
        return web.Response(body=json.dumps(completion), content_type="application/json")
    resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
    events = StreamEvents(body["model"], completion["id"], completion["created"])
    sent = 0
    try:
        await resp.prepare(request)
        await resp.write(events.event({"role": "assistant", "content": ""}))
        serving.submit(seq)
        while True:
            await ticket.event.wait()
            ticket.event.clear()
            if seq.cancelled:
                break
            upto = len(pieces) if seq.finished else seq.produced(serving.engine.steps)
            if upto > sent:
                await resp.write(b"".join(events.delta(kind, piece) for kind, piece in pieces[sent:upto]))
                sent = upto
            if seq.finished:
                include = (body.get("stream_options") or {}).get("include_usage")
                await resp.write(events.ending(answer.finish_reason, usage if include else None))
                await resp.write_eof()
                break
    except ConnectionError:
        serving.cancel(seq)      # the client closed the stream: free the slot now
    except asyncio.CancelledError:
        serving.cancel(seq)
        raise
    return resp
