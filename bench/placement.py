"""Where a run sat, from its result's environment: the one rule bench scripts place runs by (imported by their inline Python)."""

import math
import re


def ns(duration):
    """A protobuf JSON Duration ("0.000000083s") in ns; 0 when absent."""
    return float((duration or "0s").rstrip("s")) * 1e9


_CLASS = re.compile(r"(\w+) (?:≤ ([\d.]+)|([\d.]+)–([\d.]+)|≥ ([\d.]+)) ns")


def most_learned(texts):
    """Of several runs' placement_classes texts, the one learned from the most probes (the history grows run by run,
    and runs compared must be placed by one set of classes); "" when none learned any."""
    def probes(text):
        m = re.search(r"learned from (\d+) probes", text or "")
        return int(m.group(1)) if m else -1
    best = max(texts, key=probes, default="")
    return best if probes(best) >= 0 else ""


def learned_classes(text):
    """The placement classes a daemon had learned, as [(name, low ns, high ns)], nearest first, from the text of a
    result's environment.placement_classes ("near ≤ 58 ns, middle 144–217 ns, far ≥ 372 ns, learned from 56 probes",
    or "one placement class, 58–734 ns, ..."); None when it learned none yet."""
    text = text or ""
    one = re.match(r"one placement class, ([\d.]+)–([\d.]+) ns", text)
    if one:
        return [("one class", float(one.group(1)), float(one.group(2)))]
    classes = []
    for name, upto, low, high, beyond in _CLASS.findall(text):
        if upto:
            classes.append((name, 0.0, float(upto)))
        elif beyond:
            classes.append((name, float(beyond), math.inf))
        else:
            classes.append((name, float(low), float(high)))
    return classes or None


def _class_of(probe, classes):
    """The class whose probes' range holds the probe, or the nearest one on a log scale (a probe in a valley)."""
    def distance(c):
        _, low, high = c
        if low <= probe <= high:
            return 0.0
        return math.log(low / probe) if probe < low else math.log(probe / high)
    return min(classes, key=distance)[0]


def placement(env, near_ns, classes_text=None):
    """(class name | "near" | "far" | "moved" | "unknown", probe text): the probe before the run and, from newer builds,
    the one after it. With classes_text (the daemon's learned classes, e.g. most_learned over the runs compared), a
    probe's class is the one whose range holds it (or the nearest); without, "near" up to near_ns and "far" above. A run
    whose two probes fall in different classes was moved by the host while it ran, and its figures mix both."""
    before, after = ns(env.get("core_to_core_round_trip")), ns(env.get("core_to_core_round_trip_after"))
    if not before:
        return "unknown", ""
    classes = learned_classes(classes_text)
    if classes:
        where, then = _class_of(before, classes), _class_of(after, classes) if after else None
    else:
        where = "near" if before <= near_ns else "far"
        then = ("near" if after <= near_ns else "far") if after else None
    if then and then != where:
        return "moved", f"{before:.0f}→{after:.0f}"
    return where, f"{before:.0f}"
