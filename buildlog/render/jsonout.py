"""JSON output and its published schema (the Report model is the contract)."""

from __future__ import annotations

import json

from buildlog.report.schema import Report


def render_json(report: Report) -> str:
    """The report as indented JSON."""
    return report.model_dump_json(indent=2) + "\n"


def json_schema() -> str:
    """The JSON schema of the report, as `buildlog schema` prints it."""
    schema = Report.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "buildlog report"
    return json.dumps(schema, indent=2) + "\n"
