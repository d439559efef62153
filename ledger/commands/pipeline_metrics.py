"""The pipeline's Prometheus metrics (`ledger up`'s `/metrics` on the pipeline port, SPEC 14).

Every figure is read when it is scraped, from state that outlives any process: the published copy
(its publication row, quarantine counts and freshness per source, ledger/serving/freshness.py) and
the Dagster instance's run storage (the last successful build and its publish step). A restarted
`ledger up` reports the same figures.

| metric | labels | meaning |
|---|---|---|
| `ledger_pipeline_last_build_success_timestamp_seconds` | | end of the last successful build run |
| `ledger_pipeline_last_build_duration_seconds` | | its duration |
| `ledger_pipeline_last_publish_timestamp_seconds` | | when the published copy was written |
| `ledger_pipeline_last_publish_duration_seconds` | | the last successful build's publish step |
| `ledger_pipeline_published_events` | | events in the published copy |
| `ledger_pipeline_newest_event_timestamp_seconds` | | newest `occurred_at` published |
| `ledger_pipeline_quarantined_rows` | `reason` | quarantined rows, every file ever ingested |
| `ledger_pipeline_data_lag_seconds` | `source` | publish time minus the newest visible batch's `202` |
| `ledger_pipeline_undelivered_notifications` | `kind` | alerts not delivered yet (kept, retried), as of the last alert run |
| `ledger_pipeline_scrape_errors` | `part` | 1 when a part could not be read (no copy yet, ...) |
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from ledger.core.settings import Settings

BUILD_JOB_NAME = "build_ledger"  # dagster_project/definitions.py (not imported: no code location)


def _epoch(value: datetime | None) -> float | None:
    # The published copy keeps naive UTC timestamps.
    return None if value is None else value.replace(tzinfo=UTC).timestamp()


def _gauge(name: str, documentation: str, value: float | None) -> Iterator[GaugeMetricFamily]:
    if value is not None:
        yield GaugeMetricFamily(name, documentation, value=value)


class PipelineCollector(Collector):
    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def collect(self) -> Iterator[GaugeMetricFamily]:
        errors = GaugeMetricFamily(
            "ledger_pipeline_scrape_errors",
            "1 when a part of the pipeline's state could not be read",
            labels=["part"],
        )
        parts = (("published", self._published), ("runs", self._runs), ("alerts", self._alerts))
        for part, read in parts:
            try:
                yield from list(read())
                errors.add_metric([part], 0)
            except Exception:  # noqa: BLE001 - a scrape reports what it can read
                errors.add_metric([part], 1)
        yield errors

    def _published(self) -> Iterator[GaugeMetricFamily]:
        from ledger.serving.freshness import data_lag_by_source
        from ledger.serving.published_copy import open_published

        with open_published(self.settings) as con:
            published_at, newest, events = con.execute(
                "select published_at, newest_event_at, events from publication"
            ).fetchone()
            reasons = con.execute(
                "select reason, count(*) from marts.fct_quarantined_rows group by reason "
                "order by reason"
            ).fetchall()
            lags = data_lag_by_source(con)
        yield from _gauge(
            "ledger_pipeline_last_publish_timestamp_seconds",
            "When the published copy the boards read was written (Unix time)",
            _epoch(published_at),
        )
        yield from _gauge(
            "ledger_pipeline_newest_event_timestamp_seconds",
            "The newest occurred_at in the published copy (Unix time)",
            _epoch(newest),
        )
        yield from _gauge("ledger_pipeline_published_events", "Events published", events)
        quarantined = GaugeMetricFamily(
            "ledger_pipeline_quarantined_rows",
            "Quarantined rows by reason, every file ever ingested",
            labels=["reason"],
        )
        for reason, rows in reasons:
            quarantined.add_metric([reason], rows)
        yield quarantined
        lag = GaugeMetricFamily(
            "ledger_pipeline_data_lag_seconds",
            "Publish time minus the acceptance (202) of the newest published batch, per source",
            labels=["source"],
        )
        for source, _, _, _, _, seconds in lags:
            lag.add_metric([source], float(seconds))
        yield lag

    def _alerts(self) -> Iterator[GaugeMetricFamily]:
        from ledger.alerts.store import read_undelivered

        counts = read_undelivered(self.settings.alerts_dir)
        if counts is None:  # no alert run yet
            return
        undelivered = GaugeMetricFamily(
            "ledger_pipeline_undelivered_notifications",
            "Alert notifications not delivered yet (kept and retried), by kind, as of the last "
            "alert run",
            labels=["kind"],
        )
        for kind, count in counts.items():
            undelivered.add_metric([kind], count)
        yield undelivered

    def _runs(self) -> Iterator[GaugeMetricFamily]:
        from dagster import DagsterInstance, DagsterRunStatus, RunsFilter

        if not (self.settings.dagster_home / "dagster.yaml").exists():
            return
        with DagsterInstance.from_config(str(self.settings.dagster_home)) as instance:
            records = instance.get_run_records(
                RunsFilter(job_name=BUILD_JOB_NAME, statuses=[DagsterRunStatus.SUCCESS]), limit=1
            )
            if not records:
                return
            record = records[0]
            steps = instance.get_run_step_stats(record.dagster_run.run_id)
        yield from _gauge(
            "ledger_pipeline_last_build_success_timestamp_seconds",
            "End of the last successful build run (Unix time)",
            record.end_time,
        )
        if record.start_time and record.end_time:
            yield from _gauge(
                "ledger_pipeline_last_build_duration_seconds",
                "Duration of the last successful build run",
                record.end_time - record.start_time,
            )
        publish = [s for s in steps if s.step_key.startswith("published") and s.end_time]
        if publish:
            yield from _gauge(
                "ledger_pipeline_last_publish_duration_seconds",
                "Duration of the last successful build's publish step",
                publish[0].end_time - publish[0].start_time,
            )


def metrics_text(settings: Settings) -> tuple[bytes, str]:
    """The exposition text and its content type, read now."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(PipelineCollector(settings))
    return generate_latest(registry), CONTENT_TYPE_LATEST
