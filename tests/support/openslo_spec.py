"""A checker of OpenSLO v1 documents, written from the OpenSLO v1 specification (its README: the
general schema, SLO, SLI, AlertPolicy, AlertCondition, AlertNotificationTarget, Service and
DataSource), independent of our exporter: what a tool that loads OpenSLO requires.

`violations(documents)` lists every rule a set of documents breaks, one line each; none means the
set loads: each document well formed for its kind, names DNS-1123 labels unique within their
kind, and every reference resolving to a document of the set.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

API_VERSION = "openslo/v1"
KINDS = {"SLO", "SLI", "AlertPolicy", "AlertCondition", "AlertNotificationTarget", "Service",
         "DataSource"}  # fmt: skip
DNS_LABEL = re.compile(r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?")
# Label and annotation keys: an optional DNS-subdomain prefix and `/`, then a name of at most 63
# characters, alphanumeric at both ends, with `-`, `_`, `.` between.
KEY_NAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?")
DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*")
DURATION = re.compile(r"[1-9][0-9]*[mhdwMQY]|0m")
MAX_DESCRIPTION = 1050
REFERENCES = {  # field -> the kind it names
    "indicatorRef": "SLI",
    "alertPolicyRef": "AlertPolicy",
    "conditionRef": "AlertCondition",
    "targetRef": "AlertNotificationTarget",
    "metricSourceRef": "DataSource",
}


def violations(documents: Iterable[dict]) -> list[str]:
    documents = list(documents)
    found: list[str] = []
    names: dict[str, set[str]] = {}
    for number, document in enumerate(documents, 1):
        where = f"document {number}"
        if not isinstance(document, dict):
            found.append(f"{where}: not a mapping")
            continue
        kind = document.get("kind")
        name = (document.get("metadata") or {}).get("name")
        where = f"{kind} {name!r}"
        if document.get("apiVersion") != API_VERSION:
            found.append(f"{where}: apiVersion is not {API_VERSION}")
        if kind not in KINDS:
            found.append(f"{where}: unknown kind")
            continue
        found += [f"{where}: {problem}" for problem in _metadata(document.get("metadata"))]
        if isinstance(name, str):
            if name in names.setdefault(kind, set()):
                found.append(f"{where}: a second {kind} of that name")
            names[kind].add(name)
        spec = document.get("spec")
        if not isinstance(spec, dict):
            found.append(f"{where}: no spec")
            continue
        found += [f"{where}: {problem}" for problem in _SPEC_CHECKS[kind](spec)]
    for document in documents:
        if isinstance(document, dict):
            where = f"{document.get('kind')} {(document.get('metadata') or {}).get('name')!r}"
            for field, value in _references(document.get("spec")):
                if value not in names.get(REFERENCES[field], set()):
                    found.append(f"{where}: {field} {value!r} names no {REFERENCES[field]}")
    return found


def _metadata(metadata: object) -> list[str]:
    if not isinstance(metadata, dict):
        return ["no metadata"]
    found = []
    name = metadata.get("name")
    if not isinstance(name, str) or not DNS_LABEL.fullmatch(name):
        found.append(f"metadata.name {name!r} is not a DNS-1123 label of at most 63 characters")
    for key, value in (metadata.get("labels") or {}).items():
        if not KEY_NAME.fullmatch(key):
            found.append(f"label key {key!r} is not valid")
        if not (isinstance(value, str) or (isinstance(value, list) and all(
            isinstance(item, str) for item in value
        ))):  # fmt: skip
            found.append(f"label {key!r}: its value is not a string or a list of strings")
    for key, value in (metadata.get("annotations") or {}).items():
        prefix, _, key_name = key.rpartition("/")
        if (prefix and not DNS_SUBDOMAIN.fullmatch(prefix)) or not KEY_NAME.fullmatch(key_name):
            found.append(f"annotation key {key!r} is not valid")
        if prefix == "openslo.com":
            found.append(f"annotation key {key!r} uses the reserved prefix openslo.com/")
        if not isinstance(value, str):
            found.append(f"annotation {key!r}: its value is not a string")
    return found


def _description(spec: dict) -> list[str]:
    description = spec.get("description")
    if description is None:
        return []
    if not isinstance(description, str) or len(description) > MAX_DESCRIPTION:
        return [f"description is not a string of at most {MAX_DESCRIPTION} characters"]
    return []


def _duration(value: object, field: str) -> list[str]:
    if isinstance(value, str) and DURATION.fullmatch(value):
        return []
    return [f"{field} {value!r} is not a duration shorthand"]


def _slo(spec: dict) -> list[str]:
    found = _description(spec)
    if ("indicator" in spec) == ("indicatorRef" in spec):
        found.append("exactly one of indicator and indicatorRef is required")
    if not isinstance(spec.get("service"), str):
        found.append("service is required")
    windows = spec.get("timeWindow")
    if windows is not None:
        if not isinstance(windows, list) or len(windows) != 1:
            found.append("timeWindow must hold exactly one item")
        else:
            [window] = windows
            found += _duration(window.get("duration"), "timeWindow.duration")
            if window.get("isRolling") is not True and "calendar" not in window:
                found.append("a time window that is not rolling needs a calendar")
    method = spec.get("budgetingMethod")
    if method not in ("Occurrences", "Timeslices"):
        found.append(f"budgetingMethod {method!r} is not Occurrences or Timeslices")
    objectives = spec.get("objectives")
    if not isinstance(objectives, list) or not objectives:
        found.append("objectives are required")
    for objective in objectives or []:
        target, percent = objective.get("target"), objective.get("targetPercent")
        if (target is None) == (percent is None):
            found.append("an objective needs exactly one of target and targetPercent")
        if target is not None and not (isinstance(target, int | float) and 0 <= target < 1):
            found.append(f"objective target {target!r} is not in [0, 1)")
        if percent is not None and not (isinstance(percent, int | float) and 0 <= percent < 100):
            found.append(f"objective targetPercent {percent!r} is not in [0, 100)")
        if method == "Timeslices" and not {"timeSliceTarget", "timeSliceWindow"} <= set(objective):
            found.append("Timeslices objectives need timeSliceTarget and timeSliceWindow")
    for policy in spec.get("alertPolicies") or []:
        if not isinstance(policy, dict):
            found.append(f"alertPolicies item {policy!r} is neither an alertPolicyRef nor inline")
        elif "alertPolicyRef" not in policy and policy.get("kind") != "AlertPolicy":
            found.append("an alertPolicies item needs alertPolicyRef or an inline AlertPolicy")
    return found


def _metric(metric: object, where: str) -> list[str]:
    if not isinstance(metric, dict) or not isinstance(metric.get("metricSource"), dict):
        return [f"{where} needs a metricSource"]
    source = metric["metricSource"]
    found = [] if "spec" in source else [f"{where}.metricSource needs a spec"]
    if "type" not in source and "metricSourceRef" not in source:
        found.append(f"{where}.metricSource needs a type or a metricSourceRef")
    return found


def _sli(spec: dict) -> list[str]:
    found = _description(spec)
    ratio, threshold = spec.get("ratioMetric"), spec.get("thresholdMetric")
    if (ratio is None) == (threshold is None):
        return [*found, "exactly one of ratioMetric and thresholdMetric is required"]
    if threshold is not None:
        return [*found, *_metric(threshold, "thresholdMetric")]
    if "raw" in ratio:
        if {"good", "bad", "total"} & set(ratio):
            found.append("ratioMetric.raw cannot be used with good, bad or total")
        if ratio.get("rawType") not in ("success", "failure"):
            found.append("ratioMetric.raw needs rawType success or failure")
        return [*found, *_metric(ratio["raw"], "ratioMetric.raw")]
    if ("good" in ratio) == ("bad" in ratio):
        found.append("ratioMetric needs exactly one of good and bad")
    if "total" not in ratio:
        found.append("ratioMetric needs total")
    if not isinstance(ratio.get("counter"), bool):
        found.append("ratioMetric.counter must be true or false")
    for part in ("good", "bad", "total"):
        if part in ratio:
            found += _metric(ratio[part], f"ratioMetric.{part}")
    return found


def _alert_policy(spec: dict) -> list[str]:
    found = _description(spec)
    for flag in ("alertWhenNoData", "alertWhenResolved", "alertWhenBreaching"):
        if flag in spec and not isinstance(spec[flag], bool):
            found.append(f"{flag} must be true or false")
    conditions = spec.get("conditions")
    if not isinstance(conditions, list) or len(conditions) != 1:
        found.append("conditions must hold exactly one condition")
    for condition in conditions or []:
        if not isinstance(condition, dict) or (
            "conditionRef" not in condition and condition.get("kind") != "AlertCondition"
        ):
            found.append("a condition needs conditionRef or an inline AlertCondition")
    targets = spec.get("notificationTargets")
    if not isinstance(targets, list) or not targets:
        found.append("notificationTargets are required")
    for target in targets or []:
        if not isinstance(target, dict) or (
            "targetRef" not in target and target.get("kind") != "AlertNotificationTarget"
        ):
            found.append("a notification target needs targetRef or an inline target")
    return found


def _alert_condition(spec: dict) -> list[str]:
    found = _description(spec)
    if not isinstance(spec.get("severity"), str):
        found.append("severity is required")
    condition = spec.get("condition")
    if not isinstance(condition, dict):
        return [*found, "condition is required"]
    if condition.get("kind", "burnrate") != "burnrate":
        found.append(f"condition kind {condition.get('kind')!r} is not burnrate")
    if condition.get("op", "gt") not in ("lte", "gte", "lt", "gt"):
        found.append(f"condition op {condition.get('op')!r} is not lte, gte, lt or gt")
    if not isinstance(condition.get("threshold"), int | float):
        found.append("condition.threshold is required (a number)")
    found += _duration(condition.get("lookbackWindow"), "condition.lookbackWindow")
    found += _duration(condition.get("alertAfter"), "condition.alertAfter")
    return found


def _notification_target(spec: dict) -> list[str]:
    found = _description(spec)
    if not isinstance(spec.get("target"), str):
        found.append("target is required")
    return found


def _service(spec: dict) -> list[str]:
    return _description(spec)


def _data_source(spec: dict) -> list[str]:
    found = _description(spec)
    if not isinstance(spec.get("type"), str):
        found.append("type is required")
    return found


_SPEC_CHECKS = {
    "SLO": _slo,
    "SLI": _sli,
    "AlertPolicy": _alert_policy,
    "AlertCondition": _alert_condition,
    "AlertNotificationTarget": _notification_target,
    "Service": _service,
    "DataSource": _data_source,
}


def _references(value: object):
    """Every (reference field, name) pair anywhere in `value`, inline documents included."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key in REFERENCES and isinstance(item, str):
                yield key, item
            else:
                yield from _references(item)
    elif isinstance(value, list):
        for item in value:
            yield from _references(item)
