"""Where a run sat, from its result's environment: the one rule bench scripts place runs by (imported by their inline Python)."""


def ns(duration):
    """A protobuf JSON Duration ("0.000000083s") in ns; 0 when absent."""
    return float((duration or "0s").rstrip("s")) * 1e9


def placement(env, near_ns):
    """("near" | "far" | "moved" | "unknown", probe text): the probe before the run and, from newer builds, the one after
    it. A run whose two probes fall in different placements was moved by the host while it ran, and its figures mix both."""
    before, after = ns(env.get("core_to_core_round_trip")), ns(env.get("core_to_core_round_trip_after"))
    if not before:
        return "unknown", ""
    where = "near" if before <= near_ns else "far"
    if after and ("near" if after <= near_ns else "far") != where:
        return "moved", f"{before:.0f}→{after:.0f}"
    return where, f"{before:.0f}"
