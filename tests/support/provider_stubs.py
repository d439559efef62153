"""Local stand-ins for the voice providers' APIs, on 127.0.0.1, speaking their wire formats: the
real LiveKit plugins and Pipecat services are pointed at them through their base URL options.

- OpenAI: `POST /v1/chat/completions` streams server-sent events ending with a usage chunk (the
  figures of `ChatReply`); `POST /v1/audio/speech` answers `SPEECH_SECONDS` of 24 kHz PCM.
- Deepgram: `GET /v1/listen` (WebSocket) counts the audio it receives and, at `Finalize` or
  `CloseStream`, sends one final `Results` message.
- Cartesia: `POST /tts/bytes` answers raw PCM at the requested rate.
- ElevenLabs: `POST /v1/text-to-speech/{voice}/stream` answers raw PCM (LiveKit's plugin),
  `.../stream/with-timestamps` JSON lines with base64 audio (Pipecat's HTTP service), and
  `GET .../multi-stream-input` (WebSocket, LiveKit's streaming TTS) answers each flushed context
  with one audio message and, when the context is closed, `isFinal`.
- LiveKit Inference: `POST /v1/chat/completions` as OpenAI's (its LLM is OpenAI-compatible) and
  `GET /stt` (WebSocket: `session.create`, base64 `input_audio`, `session.finalize` answered by
  one `final_transcript` and `session.closed`).
Every request is recorded (`requests`) so a test can check what the plugin asked for.
"""

from __future__ import annotations

import asyncio
import base64
import json
from dataclasses import dataclass, field

from aiohttp import WSMsgType, web

SPEECH_SECONDS = 1  # every TTS answer is this long
TRANSCRIPT = "what time is it"


@dataclass(frozen=True)
class ChatReply:
    text: str = "It is noon."
    prompt_tokens: int = 1200
    cached_tokens: int = 1000
    completion_tokens: int = 50


@dataclass
class ProviderStub:
    reply: ChatReply = field(default_factory=ChatReply)
    requests: list[tuple[str, dict]] = field(default_factory=list)
    # audio bytes each STT connection received before its transcript (Deepgram's and LiveKit
    # Inference's), in the order the transcripts were sent
    audio_heard: list[tuple[str, int]] = field(default_factory=list)
    _runner: web.AppRunner | None = None
    _deepgram_sockets: list[web.WebSocketResponse] = field(default_factory=list)
    port: int = 0

    @property
    def http(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    async def start(self) -> ProviderStub:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_post("/v1/audio/speech", self._openai_speech)
        app.router.add_get("/v1/listen", self._deepgram_listen)
        app.router.add_get("/stt", self._inference_stt)
        app.router.add_post("/tts/bytes", self._cartesia_bytes)
        app.router.add_post("/v1/text-to-speech/{voice}/stream", self._elevenlabs_stream)
        app.router.add_post(
            "/v1/text-to-speech/{voice}/stream/with-timestamps", self._elevenlabs_timestamps
        )
        app.router.add_get(
            "/v1/text-to-speech/{voice}/multi-stream-input", self._elevenlabs_multi_stream
        )
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    # -- OpenAI ---------------------------------------------------------------------------------

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append(("chat", body))
        reply = self.reply
        number = sum(1 for kind, _ in self.requests if kind == "chat")
        base = {
            "id": f"chatcmpl-stub-{number}",
            "object": "chat.completion.chunk",
            "created": 1_700_000_000,
            "model": body["model"],
        }
        usage = {
            "prompt_tokens": reply.prompt_tokens,
            "completion_tokens": reply.completion_tokens,
            "total_tokens": reply.prompt_tokens + reply.completion_tokens,
            "prompt_tokens_details": {"cached_tokens": reply.cached_tokens},
        }
        chunks = [
            {
                **base,
                "choices": [
                    {
                        "index": 0,
                        "delta": {"role": "assistant", "content": reply.text},
                        "finish_reason": None,
                    }
                ],
            },
            {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
            {**base, "choices": [], "usage": usage},
        ]
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for chunk in chunks:
            await response.write(f"data: {json.dumps(chunk)}\n\n".encode())
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response

    async def _openai_speech(self, request: web.Request) -> web.Response:
        self.requests.append(("openai_speech", await request.json()))
        return web.Response(body=_silence(24_000), content_type="audio/pcm")

    # -- Deepgram -------------------------------------------------------------------------------

    async def _deepgram_listen(self, request: web.Request) -> web.WebSocketResponse:
        self.requests.append(("deepgram_listen", dict(request.query)))
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        self._deepgram_sockets.append(ws)
        received = 0
        async for message in ws:
            if message.type == WSMsgType.BINARY:
                received += len(message.data)
            elif message.type == WSMsgType.TEXT:
                kind = json.loads(message.data).get("type")
                if kind in ("Finalize", "CloseStream") and received:
                    rate = int(request.query.get("sample_rate", "16000"))
                    await ws.send_str(json.dumps(_deepgram_results(received / 2 / rate)))
                    self.audio_heard.append(("deepgram", received))
                    received = 0
                if kind == "CloseStream":
                    await ws.close()
        return ws

    async def deepgram_hears(self, transcript: str, *, is_final: bool, speech_final: bool) -> None:
        """Send a `Results` message to every open Deepgram connection, as Deepgram does when it
        hears something (a test decides what the caller "says" and when)."""
        message = _deepgram_results(0.5)
        message.update(is_final=is_final, speech_final=speech_final, from_finalize=False)
        alternative = message["channel"]["alternatives"][0]
        alternative["transcript"] = transcript
        alternative["words"] = [w for w in alternative["words"] if transcript] and [
            {"word": word, "start": 0.0, "end": 0.2, "confidence": 0.9}
            for word in transcript.split()
        ]
        for _ in range(6000):  # the plugin may still be connecting: wait up to a minute
            listening = [ws for ws in self._deepgram_sockets if not ws.closed]
            if listening:
                break
            await asyncio.sleep(0.01)
        else:
            raise RuntimeError("no Deepgram connection is open to hear anything")
        for ws in listening:
            await ws.send_str(json.dumps(message))

    # -- LiveKit Inference ------------------------------------------------------------------------

    async def _inference_stt(self, request: web.Request) -> web.WebSocketResponse:
        self.requests.append(("inference_stt", dict(request.query)))
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        received, rate = 0, 16_000
        async for message in ws:
            if message.type != WSMsgType.TEXT:
                continue
            data = json.loads(message.data)
            if data["type"] == "session.create":
                rate = int(data.get("settings", {}).get("sample_rate", rate))
                await ws.send_str(json.dumps({"type": "session.created"}))
            elif data["type"] == "input_audio":
                received += len(base64.b64decode(data["audio"]))
            elif data["type"] == "session.finalize":
                self.audio_heard.append(("inference", received))
                final = {
                    "type": "final_transcript",
                    "transcript": TRANSCRIPT,
                    "language": "en",
                    "start": 0.0,
                    "duration": received / 2 / rate,
                    "confidence": 0.99,
                    "request_id": "inference-stub-1",
                }
                await ws.send_str(json.dumps(final))
                await ws.send_str(json.dumps({"type": "session.finalized"}))
                await ws.send_str(json.dumps({"type": "session.closed"}))
                await ws.close()
        return ws

    # -- Cartesia and ElevenLabs ------------------------------------------------------------------

    async def _cartesia_bytes(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append(("cartesia_bytes", body))
        rate = int(body.get("output_format", {}).get("sample_rate", 24_000))
        return web.Response(body=_silence(rate), content_type="audio/pcm")

    async def _elevenlabs_stream(self, request: web.Request) -> web.Response:
        self.requests.append(("elevenlabs_stream", await request.json()))
        rate = _elevenlabs_rate(request.query.get("output_format", "pcm_24000"))
        return web.Response(body=_silence(rate), content_type="audio/pcm")

    async def _elevenlabs_multi_stream(self, request: web.Request) -> web.WebSocketResponse:
        self.requests.append(("elevenlabs_multi_stream", dict(request.query)))
        rate = _elevenlabs_rate(request.query.get("output_format"))
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        spoken: dict[str, bool] = {}
        async for message in ws:
            if message.type != WSMsgType.TEXT:
                continue
            data = json.loads(message.data)
            context = data.get("context_id")
            if data.get("text", "").strip():
                spoken.setdefault(context, False)
            if data.get("flush") and context in spoken and not spoken[context]:
                spoken[context] = True
                audio = base64.b64encode(_silence(rate)).decode()
                await ws.send_str(json.dumps({"audio": audio, "contextId": context}))
            if data.get("close_context"):
                await ws.send_str(json.dumps({"contextId": context, "isFinal": True}))
        return ws

    async def _elevenlabs_timestamps(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append(("elevenlabs_timestamps", body))
        rate = _elevenlabs_rate(request.query.get("output_format") or body.get("output_format"))
        line = {"audio_base64": base64.b64encode(_silence(rate)).decode(), "alignment": None}
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        await response.prepare(request)
        await response.write(json.dumps(line).encode() + b"\n")
        await response.write_eof()
        return response


def _silence(rate: int) -> bytes:
    return b"\x00\x00" * rate * SPEECH_SECONDS


def _elevenlabs_rate(output_format: str | None) -> int:
    # "pcm_24000" -> 24000
    text = output_format or "pcm_24000"
    return int(text.split("_")[1]) if text.startswith("pcm_") else 24_000


def _deepgram_results(seconds: float) -> dict:
    return {
        "type": "Results",
        "channel_index": [0, 1],
        "duration": seconds,
        "start": 0.0,
        "is_final": True,
        "speech_final": True,
        "from_finalize": True,
        "channel": {
            "alternatives": [
                {
                    "transcript": TRANSCRIPT,
                    "confidence": 0.99,
                    "words": [
                        {"word": word, "start": 0.1 * n, "end": 0.1 * n + 0.1, "confidence": 0.99}
                        for n, word in enumerate(TRANSCRIPT.split())
                    ],
                }
            ]
        },
        "metadata": {
            "request_id": "dg-stub-request-1",
            "model_info": {"name": "general-nova-3", "version": "stub", "arch": "nova-3"},
            "model_uuid": "00000000-0000-0000-0000-000000000000",
        },
    }
