"""Preset loading: YAML/JSON data files in one schema → validated specs, with sources kept.

File layout (see presets/README.md)::

    schema: roofline-presets/1
    kind: hardware            # hardware | model | price | tier | measurement
    items:
      h100:
        name: NVIDIA H100 SXM5 80GB
        source: "default source for bare numbers in this entry"
        date: "2023-03"
        flops_bf16_per_s: {value: 989.4e12, source: "...", date: "2023-03", uncertain: false}
        hbm_bytes: 80e9           # bare number: takes the entry's source and date

Every number ends up with a source and a date (per field, or the entry's defaults); a number
with neither is an error.  Files are parsed with a ``yaml.SafeLoader`` that also refuses anchors
and aliases (no code runs, no "billion laughs" expansion), capped in
size, and every problem is reported with the item and field it concerns.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from .specs import COMPUTE_DTYPES, DTYPE_BYTES, Hardware, ModelArch, _Spec, check_number, choice, describe_range, num

PRESET_DIR = Path(__file__).resolve().parents[1] / "presets"
SCHEMA = "roofline-presets/1"
MAX_FILE_BYTES = 256 * 1024          # a user's own file (upload or --hardware/--measurements FILE)
BUILTIN_MAX_BYTES = 4 * 1024 * 1024  # the project's own preset files: read from the checkout, not a stranger
ENTRY_KEYS = {"source", "date", "note", "aliases"}


@dataclass(frozen=True)
class PriceOffer(_Spec):
    """One provider's list price for one model at one date (USD per million tokens)."""

    name: str
    provider: str = ""
    model: str = ""
    input_usd_per_mtok: float = num("USD/Mtok", default=1.0)
    output_usd_per_mtok: float = num("USD/Mtok", default=1.0)
    cache_read_usd_per_mtok: float | None = num("USD/Mtok", optional=True)
    cache_write_5m_usd_per_mtok: float | None = num("USD/Mtok", optional=True)
    cache_write_1h_usd_per_mtok: float | None = num("USD/Mtok", optional=True)
    cache_storage_usd_per_mtok_hour: float | None = num("USD/Mtok/h", optional=True)
    long_context_threshold_tokens: float | None = num("tokens", optional=True)
    long_context_input_usd_per_mtok: float | None = num("USD/Mtok", optional=True)
    long_context_output_usd_per_mtok: float | None = num("USD/Mtok", optional=True)
    fast_input_usd_per_mtok: float | None = num("USD/Mtok", optional=True)
    fast_output_usd_per_mtok: float | None = num("USD/Mtok", optional=True)
    fast_speedup: float | None = num("x", optional=True, doc="quoted output tokens/s multiple of fast mode")
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def output_input_ratio(self) -> float:
        return self.output_usd_per_mtok / self.input_usd_per_mtok

    @property
    def fast_price_multiple(self) -> float | None:
        if self.fast_output_usd_per_mtok is None:
            return None
        return self.fast_output_usd_per_mtok / self.output_usd_per_mtok


# How a published serving figure was counted: output tokens only, or input + output ("total"); per GPU,
# per node (of `gpus_per_node`) or for the whole measured group of `gpus`.
THROUGHPUT_METRICS = ("output per GPU", "output per node", "output per group", "total per GPU", "total per group")
MEASUREMENT_SCOPES = ("decode", "system")


@dataclass(frozen=True)
class Measurement(_Spec):
    """One published serving result with the setup it was measured on (presets/measurements.yaml).

    scope: "decode" — the figure counts decode GPUs only (prefill ran elsewhere and is not charged);
           "system" — the figure's GPUs did all the work, prefill included (aggregated serving, or a
           disaggregated system whose prefill GPUs are counted in `gpus`).
    The published number is kept as published (`throughput` with its `throughput_metric`);
    `output_tokens_per_s_per_gpu` converts it.
    """

    name: str
    model: str                      # model preset key
    hardware: str                   # hardware preset key used for the bound
    publisher: str
    weights: str = choice(tuple(DTYPE_BYTES), doc="weight format the bound streams")
    kv: str = choice(tuple(DTYPE_BYTES), doc="KV-cache format")
    compute: str = choice(COMPUTE_DTYPES, doc="matmul format whose peak FLOP/s the bound uses")
    scope: str = choice(MEASUREMENT_SCOPES)
    gpus: int = num("GPUs", 1, lo_open=False, integer=True, doc="GPUs the published figure covers")
    chips_per_replica: int = num("chips", 1, lo_open=False, integer=True,
                                 doc="C: GPUs that hold one copy of the weights and work on one step")
    input_tokens: float = num("tokens", 1, lo_open=False, doc="prompt length L")
    output_tokens: float = num("tokens", 1, lo_open=False, doc="output length O")
    throughput: float = num("tok/s", doc="the published throughput, in `throughput_metric`")
    throughput_metric: str = choice(THROUGHPUT_METRICS)
    chip: str = ""                  # the accelerator as published, when the preset stands in for it (H800 → h100)
    engine: str = ""
    parallelism: str = ""           # as published, e.g. "EP144, DP attention"
    prefill_gpus: int | None = num("GPUs", 0, lo_open=False, integer=True, optional=True,
                                   doc="of `gpus`, those doing prefill (disaggregated systems)")
    gpus_per_node: int = num("GPUs", 1, lo_open=False, integer=True, default=8)
    concurrency: float | None = num("sequences", 1, lo_open=False, optional=True,
                                    doc="sequences in flight over `gpus`")
    context_tokens: float | None = num("tokens", 1, lo_open=False, optional=True,
                                       doc="mean KV length per decode step, when published (else L + O/2)")
    cache_hit_rate: float = num("-", 0, 1, lo_open=False, default=0.0,
                                doc="share of prompt tokens served from a prefix cache")
    tokens_per_step: float = num("tokens", 1, lo_open=False, default=1.0,
                                 doc="tokens accepted per sequence per step (MTP / speculative decoding)")
    tokens_computed_per_step: float = num("tokens", 1, lo_open=False, default=1.0,
                                          doc="tokens computed per sequence per step (1 + draft tokens)")
    tokens_per_s_per_user: float | None = num("tok/s", optional=True, doc="per-user decode speed (1/TPOT)")
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def _check(self) -> None:
        n = type(self).__name__
        if self.chips_per_replica > self.gpus:
            raise ValueError(f"{n}.chips_per_replica = {self.chips_per_replica} is out of range: it must be "
                             f"≤ gpus = {self.gpus}")
        if self.prefill_gpus is not None and self.prefill_gpus >= self.gpus:
            raise ValueError(f"{n}.prefill_gpus = {self.prefill_gpus} is out of range: it must be < gpus = {self.gpus}")
        if self.tokens_per_step > self.tokens_computed_per_step:
            raise ValueError(f"{n}.tokens_per_step = {self.tokens_per_step:g} is out of range: it must be "
                             f"≤ tokens_computed_per_step = {self.tokens_computed_per_step:g} (accepted ≤ computed)")

    @property
    def output_share(self) -> float:
        """O / (L + O): the output tokens' share of a "total" (input + output) token count."""
        return self.output_tokens / (self.input_tokens + self.output_tokens)

    @property
    def output_tokens_per_s_per_gpu(self) -> float:
        """The published figure as output tokens/s per GPU (per node ÷ GPUs per node, per group ÷ gpus,
        total × O/(L+O))."""
        x = self.throughput * (self.output_share if self.throughput_metric.startswith("total") else 1.0)
        if self.throughput_metric.endswith("per node"):
            return x / self.gpus_per_node
        if self.throughput_metric.endswith("per group"):
            return x / self.gpus
        return x

    @property
    def decode_context(self) -> float:
        """Mean KV length a decode step reads: the published figure, else L + O/2."""
        return self.context_tokens if self.context_tokens is not None else self.input_tokens + self.output_tokens / 2


def _tier_cls() -> type[_Spec]:
    from .economics import Tier  # economics imports roofline; import late to keep presets light
    return Tier


KINDS: dict[str, type[_Spec]] = {"hardware": Hardware, "model": ModelArch, "price": PriceOffer,
                                 "tier": _tier_cls(), "measurement": Measurement}
FILES = {"hardware": "hardware.yaml", "model": "models.yaml", "price": "prices.yaml", "tier": "tiers.yaml",
         "measurement": "measurements.yaml"}


class _Loader(yaml.SafeLoader):
    """`yaml.safe_load` without anchors and aliases: a preset never needs them, and a few hundred bytes
    of nested aliases stand for billions of elements once expanded."""

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            raise yaml.composer.ComposerError(None, None, "anchors and aliases (&name, *name) are not allowed",
                                              self.peek_event().start_mark)
        return super().compose_node(parent, index)


class PresetError(ValueError):
    """A preset file or entry is malformed.  `problems` lists one message per problem."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("; ".join(problems))


@dataclass(frozen=True)
class Sourced:
    """Where one number came from."""

    source: str
    date: str
    uncertain: bool = False
    note: str = ""


def _number_fields(cls: type[_Spec]) -> dict[str, Mapping[str, Any]]:
    return {f.name: f.metadata for f in fields(cls) if f.metadata.get("kind") == "number"}


def parse_item(kind: str, key: str, raw: Any, *, require_sources: bool = True) -> _Spec:
    """Validate one entry of a preset file into its spec, collecting every problem.

    `require_sources`: a number without a source or date is an error (the built-in presets); a
    user's own file passes False and such numbers are kept with an empty source/date, which
    `unsourced_fields` names so the app and the CLI can mark them.
    """
    cls = KINDS[kind]
    where = f"{kind} {key!r}"
    if not isinstance(raw, Mapping):
        raise PresetError([f"{where}: expected a mapping of fields, got {type(raw).__name__}"])
    numbers = _number_fields(cls)
    allowed = set(cls.field_names()) | ENTRY_KEYS
    problems: list[str] = []
    for k in raw:
        if k not in allowed:
            problems.append(f"{where}: unknown field {k!r}")
    default_source, default_date = raw.get("source"), raw.get("date")
    values: dict[str, Any] = {}
    meta: dict[str, Sourced] = {}
    for k, v in raw.items():
        if k in ENTRY_KEYS or k not in allowed:
            continue
        if k in numbers:
            if isinstance(v, Mapping):
                extra = set(v) - {"value", "source", "date", "uncertain", "note"}
                if extra:
                    problems.append(f"{where}.{k}: unknown key(s) {', '.join(sorted(map(str, extra)))}")
                value, src = v.get("value"), v.get("source", default_source)
                date, unc, note = v.get("date", default_date), v.get("uncertain", False), v.get("note", "")
                if not isinstance(unc, bool):
                    problems.append(f"{where}.{k}.uncertain must be true or false, got {unc!r}")
                    unc = True
            else:
                value, src, date, unc, note = v, default_source, default_date, False, ""
            if value is None and numbers[k].get("optional"):
                continue
            try:
                values[k] = check_number(cls.__name__, k, value, numbers[k])
            except ValueError as e:
                problems.append(f"{where}.{k}: {e}")
                continue
            except OverflowError:             # an integer beyond any float (≥ ~309 digits)
                problems.append(f"{where}.{k}: the number is too large for a float: it must be "
                                f"{describe_range(numbers[k])} [{numbers[k]['unit']}]")
                continue
            if src is not None and not isinstance(src, str):
                problems.append(f"{where}.{k}: 'source' must be text, got {type(src).__name__}")
                src = None
            if require_sources and not src:
                problems.append(f"{where}.{k}: no source (give 'source' on the field or the entry)")
            if require_sources and not date:
                problems.append(f"{where}.{k}: no date (give 'date' on the field or the entry)")
            meta[k] = Sourced(str(src or ""), str(date or ""), bool(unc), str(note or ""))
        else:
            if isinstance(v, (Mapping, list)):
                problems.append(f"{where}.{k}: expected a plain value, got {type(v).__name__}")
                continue
            values[k] = v
    values.setdefault("name", key)
    if problems:
        raise PresetError(problems)
    try:
        spec = cls.from_dict(values)
    except (TypeError, ValueError) as e:
        raise PresetError([f"{where}: {e}"]) from None
    object.__setattr__(spec, "meta", meta)
    return spec


def parse_text(text: str | bytes, kind: str | None = None, *, require_sources: bool = True,
               max_bytes: int = MAX_FILE_BYTES) -> dict[str, _Spec]:
    """Parse a whole preset document (YAML or JSON).  `kind` must match the file's when given.

    `require_sources=False` for a user's own file: numbers may come without source and date (see
    `unsourced_fields`); every other rule holds.  `max_bytes`: the size cap (a user's file: MAX_FILE_BYTES)."""
    text = _decode(text, max_bytes)
    try:
        doc = yaml.load(text, Loader=_Loader)  # JSON is YAML; a SafeLoader builds plain data only
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        at = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        why = " ".join(str(getattr(e, "problem", None) or e).split())   # one line (a ReaderError's has two)
        raise PresetError([f"not valid YAML or JSON{at}: {why}"]) from None
    except RecursionError:
        raise PresetError(["document nests too deeply"]) from None
    except ValueError as e:                   # int() refuses integers past sys.get_int_max_str_digits()
        what = "a number has too many digits to read" if "digits" in str(e) else str(e)
        raise PresetError([f"not valid YAML or JSON: {what}"]) from None
    if not isinstance(doc, Mapping):
        raise PresetError(["expected a mapping with 'schema', 'kind' and 'items' at the top"])
    problems = []
    if doc.get("schema") != SCHEMA:
        problems.append(f"'schema' must be {SCHEMA!r}, got {doc.get('schema')!r}")
    file_kind = doc.get("kind")
    if not isinstance(file_kind, str) or file_kind not in KINDS:
        problems.append(f"'kind' must be one of {', '.join(KINDS)}, got {file_kind!r}")
    elif kind is not None and file_kind != kind:
        problems.append(f"expected a {kind} file, got kind {file_kind!r}")
    items = doc.get("items")
    if not isinstance(items, Mapping) or not items:
        problems.append("'items' must be a non-empty mapping of name → fields")
    extra = set(doc) - {"schema", "kind", "items", "note"}
    if extra:
        problems.append(f"unknown top-level key(s) {', '.join(sorted(map(str, extra)))}")
    if problems:
        raise PresetError(problems)
    out: dict[str, _Spec] = {}
    for key, raw in items.items():
        try:
            out[str(key)] = parse_item(file_kind, str(key), raw, require_sources=require_sources)
        except PresetError as e:
            problems.extend(e.problems)
    if problems:
        raise PresetError(problems)
    return out


MAX_ITEMS = 1000      # a user's measurement file: at most this many rows/items (each is a roofline to evaluate)


def _decode(data: str | bytes, max_bytes: int = MAX_FILE_BYTES) -> str:
    """Bytes → text under the size cap (UTF-8, a leading BOM dropped); PresetError otherwise."""
    if isinstance(data, bytes):
        if len(data) > max_bytes:
            raise PresetError([f"file is {len(data):,} bytes; the limit is {max_bytes:,}"])
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise PresetError(["file is not UTF-8 text"]) from None
    if len(data) > max_bytes:
        raise PresetError([f"file is {len(data):,} characters; the limit is {max_bytes:,}"])
    return data


def parse_csv(text: str | bytes, kind: str, *, require_sources: bool = False) -> dict[str, _Spec]:
    """Parse a CSV of items of one kind: a header row of field names, one item per row.

    Columns are the spec's field names (as in the YAML files), plus optional `key` (the item's key;
    default `row N`, N the line number), `source`, `date` and `note` (for the row's numbers).  Empty
    cells are left out.  Same rules and per-field messages as `parse_text` (size cap, ranges, unknown
    fields); a user's CSV may leave out sources unless `require_sources`.
    """
    if kind not in KINDS:
        raise PresetError([f"'kind' must be one of {', '.join(KINDS)}, got {kind!r}"])
    text = _decode(text)
    allowed = set(KINDS[kind].field_names()) | ENTRY_KEYS | {"key"}
    try:
        reader = csv.reader(io.StringIO(text, newline=""))
        rows = list(reader)
    except csv.Error as e:
        raise PresetError([f"not valid CSV: {e}"]) from None
    rows = [r for r in rows if any(c.strip() for c in r)]
    if not rows:
        raise PresetError(["the CSV is empty: expected a header row of field names, then one row per item"])
    header = [h.strip() for h in rows[0]]
    problems = [f"column {h!r}: unknown field; allowed: {', '.join(sorted(allowed - {'aliases'}))}"
                for h in header if h not in allowed or h == "aliases"]
    dup = sorted({h for h in header if header.count(h) > 1})
    problems += [f"column {h!r} appears more than once" for h in dup]
    if len(rows) == 1:
        problems.append("the CSV has a header but no rows")
    if len(rows) - 1 > MAX_ITEMS:
        problems.append(f"the CSV has {len(rows) - 1:,} rows; at most {MAX_ITEMS:,}")
    if problems:
        raise PresetError(problems)
    out: dict[str, _Spec] = {}
    for n, row in enumerate(rows[1:], start=2):
        if len(row) > len(header):
            problems.append(f"row {n}: {len(row)} cells for {len(header)} columns")
            continue
        raw = {h: c.strip() for h, c in zip(header, row) if c.strip() != ""}
        key = raw.pop("key", f"row {n}")
        if key in out:
            problems.append(f"row {n}: key {key!r} is used twice")
            continue
        try:
            out[key] = parse_item(kind, key, raw, require_sources=require_sources)
        except PresetError as e:
            problems.extend(e.problems)
    if problems:
        raise PresetError(problems)
    return out


def parse_user_file(data: str | bytes, kind: str, filename: str = "") -> dict[str, _Spec]:
    """A user's own file of `kind` items: CSV when the name ends in .csv, else YAML/JSON in the
    presets schema.  Sources and dates optional (see `unsourced_fields`); at most MAX_ITEMS items."""
    if filename.lower().endswith(".csv"):
        return parse_csv(data, kind, require_sources=False)
    items = parse_text(data, kind, require_sources=False)
    if len(items) > MAX_ITEMS:
        raise PresetError([f"the file has {len(items):,} items; at most {MAX_ITEMS:,}"])
    return items


def dump_item(spec: _Spec, kind: str, key: str, *, fmt: str = "yaml") -> str:
    """Serialise one spec as a preset document of its own (round-trips through parse_text)."""
    item: dict[str, Any] = {}
    meta = getattr(spec, "meta", {}) or {}
    for f in fields(spec):
        if f.name == "meta":
            continue
        v = getattr(spec, f.name)
        if v is None:
            continue
        if f.metadata.get("kind") == "number":
            m = meta.get(f.name)
            entry = {"value": v}
            if m is None or m.source or m.date:     # an unsourced number of a user's file stays unsourced
                entry.update(source=m.source if m else "user", date=m.date if m else "user")
            if m and m.uncertain:
                entry["uncertain"] = True
            item[f.name] = entry
        else:
            item[f.name] = v
    doc = {"schema": SCHEMA, "kind": kind, "items": {key: item}}
    if fmt == "json":
        return json.dumps(doc, indent=2)
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)


@cache
def _load_builtin(kind: str) -> dict[str, _Spec]:
    path = PRESET_DIR / FILES[kind]
    return parse_text(path.read_bytes(), kind, max_bytes=BUILTIN_MAX_BYTES)


def load(kind: str) -> dict[str, _Spec]:
    """The built-in presets of one kind (hardware, model, price, tier, measurement), by key."""
    if kind not in KINDS:
        raise ValueError(f"unknown preset kind {kind!r}: choose one of {', '.join(KINDS)}")
    return dict(_load_builtin(kind))


def hardware_presets() -> dict[str, Hardware]:
    return load("hardware")  # type: ignore[return-value]


def model_presets() -> dict[str, ModelArch]:
    return load("model")  # type: ignore[return-value]


def price_presets() -> dict[str, PriceOffer]:
    return load("price")  # type: ignore[return-value]


def measurement_presets() -> dict[str, Measurement]:
    return load("measurement")  # type: ignore[return-value]


@cache
def aliases(kind: str) -> dict[str, str]:
    """Alternative names given in a built-in file's `aliases:` lists → the item's key."""
    doc = yaml.safe_load((PRESET_DIR / FILES[kind]).read_text(encoding="utf-8"))
    out = {}
    for key, raw in (doc.get("items") or {}).items():
        for alias in (raw.get("aliases") or []) if isinstance(raw, Mapping) else []:
            out[str(alias).lower()] = str(key)
    return out


@cache
def entry_notes(kind: str) -> dict[str, str]:
    """The `note:` of each item in a built-in file (entry-level notes are kept out of the specs)."""
    doc = yaml.safe_load((PRESET_DIR / FILES[kind]).read_text(encoding="utf-8"))
    return {str(k): str(raw.get("note") or "") for k, raw in (doc.get("items") or {}).items()
            if isinstance(raw, Mapping)}


def get(kind: str, key: str) -> _Spec:
    """One preset by key or alias (case-insensitive); unknown → ValueError listing what exists."""
    items = load(kind)
    k = key.strip().lower()
    k = aliases(kind).get(k, k) if kind in FILES else k
    if k in items:
        return items[k]
    raise ValueError(f"unknown {kind} preset {key!r}: choose one of {', '.join(items)}")


def load_spec(kind: str, name_or_path: str) -> _Spec:
    """A preset key, or a YAML/JSON file holding exactly one item of that kind.

    A user's file may leave out sources and dates (`unsourced_fields` names those numbers); the
    built-in presets may not."""
    p = Path(name_or_path)
    if p.suffix.lower() in (".yaml", ".yml", ".json") or p.exists():
        try:  # at most one byte past the cap: parse_text refuses it (and /dev/zero cannot fill memory)
            with p.open("rb") as f:
                data = f.read(MAX_FILE_BYTES + 1)
        except OSError as e:
            raise ValueError(f"cannot read {kind} file {name_or_path!r}: {e.strerror}") from None
        items = parse_text(data, kind, require_sources=False)
        if len(items) != 1:
            raise PresetError([f"{name_or_path}: expected exactly one {kind} item, found {len(items)}"])
        return next(iter(items.values()))
    return get(kind, name_or_path)


def unsourced_fields(spec: _Spec) -> list[str]:
    """Names of the numeric fields that carry no source or no date (a user's own file may omit them)."""
    return [k for k, m in (getattr(spec, "meta", {}) or {}).items() if not (m.source and m.date)]


def uncertain_fields(spec: _Spec) -> list[str]:
    """Names of the fields whose preset figure is flagged uncertain."""
    return [k for k, m in (getattr(spec, "meta", {}) or {}).items() if m.uncertain]


def is_finite_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
