"""The pages, declared once: app.py's navigation, the tests and every link between pages read this list.

A page has one name through every layer.  The name is its URL path (`/kv-cache`); with `-` read as `_`
it names its script (`views/kv_cache.py`), its figure module (`ui/figures/kv_cache.py`, where it has
charts) and its tests (`tests/app/test_kv_cache.py`, `tests/ui/figures/test_kv_cache.py`).
docs/extending.md walks through adding one.
"""

from __future__ import annotations

from dataclasses import dataclass

SECTIONS = ("Serving", "Cluster", "Economics", "Tools")


@dataclass(frozen=True)
class Page:
    name: str           # the URL path, and the page's name in every layer
    title: str          # the navigation's entry
    heading: str        # the page's own title, at its top
    section: str        # the navigation menu it sits in (one of SECTIONS)
    prefix: str = ""    # the start of the page's own URL keys (its dials), e.g. "pr_"; "" for the older
                        # pages whose keys ui/state/dials.py lists one by one
    charts: bool = True  # False: a page without a chart (an editor)

    @property
    def module(self) -> str:
        return self.name.replace("-", "_")

    @property
    def script(self) -> str:
        """The page's script, relative to the repository root (st.Page and st.page_link take it)."""
        return f"views/{self.module}.py"


PAGES: tuple[Page, ...] = (
    # name            navigation title / the page's own heading / section / URL-key prefix
    Page("batch", "Batch: why tokens cost what they cost",
         "Why tokens cost what they cost", "Serving"),
    Page("fast-mode", "Fast mode: speed for price",
         "Fast mode: buying speed with price", "Serving"),
    Page("kv-cache", "KV cache and context",
         "KV cache: why long context costs more", "Serving"),
    Page("speculative", "Speculative decoding: tokens per step",
         "Speculative decoding: more tokens per step", "Serving", prefix="sd_"),
    Page("context", "Context limits: why context stalled",
         "Context limits: why context stalled near 100–200k", "Serving", prefix="cx_"),
    Page("scale-up", "Scale-up domain: bigger racks buy bandwidth",
         "Scale-up domain: bigger racks buy bandwidth", "Cluster"),
    Page("moe", "MoE layout across the rack",
         "MoE layout: one rack bounds an expert layer", "Cluster"),
    Page("pipeline", "Pipelining: capacity, not bandwidth",
         "Pipelining: capacity, not bandwidth", "Cluster"),
    Page("prices", "Prices decoded: what API prices reveal",
         "Prices decoded: what API prices reveal", "Economics", prefix="pr_"),
    Page("memory-tiers", "Memory tiers: where a prompt cache lives",
         "Memory tiers: where a prompt cache lives", "Economics", prefix="mt_"),
    Page("training", "Training tokens: over-training pays",
         "Training tokens: over-training pays", "Economics", prefix="tt_"),
    Page("remat", "Rematerialisation: compute for memory",
         "Rematerialisation: spend compute to save memory", "Economics", prefix="rm_"),
    Page("plan", "Plan: the cheapest deployment for a target",
         "Plan: the cheapest deployment that meets a latency target", "Tools", prefix="pl_"),
    Page("walkthrough", "Walkthrough: the lecture in steps",
         "Walkthrough", "Tools", prefix="wk_"),
    Page("reality", "Reality check: measured serving vs the roofline",
         "Reality check: measured serving vs the roofline", "Tools", prefix="rc_"),
    Page("compare", "Compare configurations",
         "Compare configurations", "Tools", prefix="cmp_"),
    Page("custom", "Custom chips and models",
         "Custom chips and models", "Tools", prefix="cu_", charts=False),
)
BY_NAME: dict[str, Page] = {p.name: p for p in PAGES}
DEFAULT = "batch"   # `/` opens this page (at its own path)


def page(name: str) -> Page:
    """The page called `name`; an unknown name is a KeyError that lists the known ones."""
    try:
        return BY_NAME[name]
    except KeyError:
        raise KeyError(f"no page {name!r}; pages: {', '.join(BY_NAME)}") from None


def script(name: str) -> str:
    return page(name).script


def heading(name: str) -> str:
    return page(name).heading
