"""A live run's spans (``streamrag live --spans``): an OpenTelemetry SDK tracer whose spans
are kept in memory and written as one file when the run ends
(:mod:`streamrag.speculate.span_files` for the two formats)."""

from __future__ import annotations

from typing import Any

from streamrag.speculate.span_files import spans_document


class SpanCollector:
    """An OpenTelemetry SDK tracer whose finished spans are kept in memory, to be written
    as one file at the end (:meth:`document`). ConfigError when the SDK (the extra
    ``otel``) is not installed."""

    def __init__(self, service: str = "streamrag") -> None:
        from streamrag.base.errors import ConfigError

        try:
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import SimpleSpanProcessor
            from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        except ImportError:
            raise ConfigError("spans need the OpenTelemetry SDK: pip install 'streamrag[otel]'") from None
        self.service = service
        self.exporter = InMemorySpanExporter()
        self.provider = TracerProvider(resource=Resource.create({"service.name": service}))
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.tracer = self.provider.get_tracer("streamrag.speculate")

    def document(self, fmt: str) -> dict[str, Any]:
        """The spans finished so far, in ``fmt`` (:data:`FORMATS`)."""
        return spans_document(self.exporter.get_finished_spans(), fmt, self.service)
