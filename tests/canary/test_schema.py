from __future__ import annotations

from pathlib import Path

import jsonschema
import pyarrow.parquet as pq

from tooldisc.canary.config import GateConfig, load_gates
from tooldisc.canary.events import EVENT_SCHEMA, load_json_schema
from tooldisc.canary.synthetic.events import synthesize


def test_json_schema_matches_the_column_contract() -> None:
    schema = load_json_schema(EVENT_SCHEMA)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert list(schema["properties"]) == list(EVENT_SCHEMA.names)
    assert schema["required"] == list(EVENT_SCHEMA.required)
    assert schema["x-schema-version"] == EVENT_SCHEMA.version == 3
    assert schema["properties"]["schema_version"]["enum"] == list(EVENT_SCHEMA.versions)
    assert all(p["description"] for p in schema["properties"].values())


def test_synthetic_rows_validate_against_the_json_schema(tmp_path: Path) -> None:
    synthesize(tmp_path / "a.parquet", 300, "high_fallback", percent=50)
    schema = load_json_schema(EVENT_SCHEMA)
    validator = jsonschema.Draft202012Validator(schema)
    table = pq.read_table(tmp_path / "a.parquet")
    assert str(table.schema.field("event_id").type) == "string"  # UUID text, as the schema says
    for row in table.to_pylist():
        row["ts"] = row["ts"].isoformat()
        assert str(__import__("uuid").UUID(row["event_id"])) == row["event_id"]
        assert not list(validator.iter_errors(row))


def test_shipped_gates_equal_code_defaults() -> None:
    assert load_gates() == GateConfig()
