"""shapes: name the shape an SVG `<path>` draws.

Each shape is built in a unit frame with proportions that keep it clearly inside
its class (a rectangle is never nearly square, a kite never a rhombus, a trapezoid
has exactly one pair of parallel sides), then rotated, scaled uniformly (so angles
and side ratios survive) and moved. Difficulty knobs: more options
(`choice_count`), edges split into collinear pieces (`split_edges`: the vertex
count no longer equals the corner count), relative path commands (`relative`:
coordinates must be accumulated), and the rotation / scale / offset ranges.
The prompt asks for the most specific name, which makes every answer unique
(a square is also a rectangle and a rhombus).
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any

from resolver.core import UserError
from resolver.tasks import Task, TestCase, param, register
from resolver.tasks.vocab import format_options, load_json, option_labels

SHAPES = {s["id"]: s["name"] for s in load_json("shapes.json")["shapes"]}
_ARC_PIECE_MAX = math.radians(150)  # every arc command spans < 180 degrees: large-arc flag 0


# ---- canonical shapes: (start point, [commands], closed). A command is
# ("L", point) or ("A", rx, ry, axis_rotation_radians, point); arcs always sweep positively.
def _polygon(points: list[tuple[float, float]]) -> tuple[tuple[float, float], list[tuple[Any, ...]], bool]:
    return points[0], [("L", p) for p in points[1:]], True


def _ellipse_point(rx: float, ry: float, t: float) -> tuple[float, float]:
    return (rx * math.cos(t), ry * math.sin(t))


def _arc_commands(rx: float, ry: float, t0: float, span: float, pieces: int) -> list[tuple[Any, ...]]:
    step = span / pieces
    return [("A", rx, ry, 0.0, _ellipse_point(rx, ry, t0 + step * (i + 1))) for i in range(pieces)]


def _arc_pieces(span: float, extra: int) -> int:
    return max(1, math.ceil(span / _ARC_PIECE_MAX)) + extra


def _canonical(shape: int, rng: random.Random, extra: int) -> tuple[tuple[float, float], list[tuple[Any, ...]], bool]:
    u = rng.uniform
    if shape == 0:
        return (-0.5, 0.0), [("L", (0.5, 0.0))], False
    if shape == 1:
        span, t0 = math.radians(u(90, 270)), u(0, 2 * math.pi)
        return _ellipse_point(0.5, 0.5, t0), _arc_commands(0.5, 0.5, t0, span, _arc_pieces(span, extra)), False
    if shape == 2:
        return _polygon(_triangle(rng))
    if shape == 3:
        span, t0 = math.radians(u(40, 300)), u(0, 2 * math.pi)
        start = _ellipse_point(0.5, 0.5, t0)
        return (0.0, 0.0), [("L", start)] + _arc_commands(0.5, 0.5, t0, span, _arc_pieces(span, extra)), True
    if shape in (6, 7):
        ry = 0.5 if shape == 6 else 0.5 * u(0.45, 0.72)
        pieces = 3 + extra
        return (0.5, 0.0), _arc_commands(0.5, ry, 0.0, 2 * math.pi, pieces), True
    return _polygon(_quadrilateral(shape, rng))


def _triangle(rng: random.Random) -> list[tuple[float, float]]:
    """Three points on a circle with every interior angle at least 25 degrees."""
    while True:
        angles = sorted(rng.uniform(0, 2 * math.pi) for _ in range(3))
        gaps = [angles[1] - angles[0], angles[2] - angles[1], 2 * math.pi - angles[2] + angles[0]]
        # the interior angle opposite an arc is half the arc
        if min(gaps) / 2 >= math.radians(25):
            return [(0.5 * math.cos(a), 0.5 * math.sin(a)) for a in angles]


def _quadrilateral(shape: int, rng: random.Random) -> list[tuple[float, float]]:
    u = rng.uniform
    if shape == 5:  # square
        return [(-0.5, -0.5), (0.5, -0.5), (0.5, 0.5), (-0.5, 0.5)]
    if shape == 4:  # rectangle, aspect clearly not 1
        h = u(0.35, 0.72) / 2
        return [(-0.5, -h), (0.5, -h), (0.5, h), (-0.5, h)]
    if shape in (8, 9):  # parallelogram / rhombus: sides a (base) and b at angle alpha
        alpha = math.radians(u(50, 75))
        b = 1.0 if shape == 9 else u(0.45, 0.75)
        dx, dy = b * math.cos(alpha), b * math.sin(alpha)
        pts = [(0.0, 0.0), (1.0, 0.0), (1.0 + dx, dy), (dx, dy)]
    elif shape == 10:  # kite: unequal halves along the axis of symmetry
        w, top, bottom = u(0.3, 0.45), u(0.2, 0.4), u(0.65, 0.9)
        pts = [(0.0, -top), (w, 0.0), (0.0, bottom), (-w, 0.0)]
    else:  # trapezoid: bases of clearly different lengths, so the legs are not parallel
        top, height, shift = u(0.3, 0.65), u(0.45, 0.8), u(-0.2, 0.2)
        pts = [(-0.5, 0.0), (0.5, 0.0), (shift + top / 2, height), (shift - top / 2, height)]
    cx = sum(p[0] for p in pts) / 4
    cy = sum(p[1] for p in pts) / 4
    return [(x - cx, y - cy) for x, y in pts]


def _split_lines(start: tuple[float, float], commands: list[tuple[Any, ...]], closed: bool, extra: int,
                 rng: random.Random) -> list[tuple[Any, ...]]:
    """Cut every straight edge into `extra` + 1 collinear pieces at random points."""
    if not extra:
        return commands
    out, here = [], start
    edges = commands + ([("L", start)] if closed else [])
    for index, cmd in enumerate(edges):
        closing = closed and index == len(edges) - 1
        if closing and math.dist(here, start) < 1e-9:
            break  # a closed curve already ends where it began: no closing edge to cut
        if cmd[0] == "L":
            target = cmd[1]
            for f in sorted(rng.uniform(0.15, 0.85) for _ in range(extra)):
                out.append(("L", (here[0] + f * (target[0] - here[0]), here[1] + f * (target[1] - here[1]))))
            if not closing:
                out.append(cmd)
        else:
            out.append(cmd)
        here = cmd[-1]
    return out


class _Placement:
    """Rotation, uniform scale and offset applied to a canonical shape."""

    def __init__(self, rotation: float, scale: float, dx: float, dy: float):
        self.cos, self.sin = math.cos(rotation), math.sin(rotation)
        self.rotation, self.scale, self.dx, self.dy = rotation, scale, dx, dy

    def point(self, p: tuple[float, float]) -> tuple[float, float]:
        x, y = p
        return (round(self.scale * (x * self.cos - y * self.sin) + self.dx, 1),
                round(self.scale * (x * self.sin + y * self.cos) + self.dy, 1))


def _num(v: float) -> str:
    text = f"{v:.1f}"
    return "0.0" if text == "-0.0" else text


def render_path(start: tuple[float, float], commands: list[tuple[Any, ...]], closed: bool, place: _Placement,
                relative: bool) -> str:
    here = place.point(start)
    parts = [f"M {_num(here[0])} {_num(here[1])}"]
    for cmd in commands:
        end = place.point(cmd[-1])
        x, y = (end[0] - here[0], end[1] - here[1]) if relative else end
        xy = f"{_num(round(x, 1))} {_num(round(y, 1))}"
        if cmd[0] == "L":
            parts.append(("l " if relative else "L ") + xy)
        else:
            _, rx, ry, rot, _ = cmd
            angle = math.degrees(rot + place.rotation) % 180
            parts.append(f"{'a' if relative else 'A'} {_num(rx * place.scale)} {_num(ry * place.scale)} "
                         f"{_num(angle)} 0 1 {xy}")
        here = end
    if closed:
        parts.append("z" if relative else "Z")
    return " ".join(parts)


@dataclass(frozen=True, slots=True, kw_only=True)
class ShapesParams:
    shape_type: int = param(-1, low=-1, high=11, doc="shape drawn (-1 = any): "
                            + ", ".join(f"{k} {v.upper()}" for k, v in SHAPES.items()))
    choice_count: int = param(6, low=2, high=12, doc="shape names offered")
    max_rotation: float = param(360.0, low=0.0, high=360.0, doc="largest rotation in degrees")
    min_scale: float = param(30.0, low=10.0, high=1000.0, doc="smallest size in units")
    max_scale: float = param(90.0, low=10.0, high=1000.0, doc="largest size in units")
    max_offset: float = param(50.0, low=0.0, high=1000.0, doc="largest shift of the centre on each axis")
    split_edges: int = param(0, low=0, high=4, doc="extra collinear points per edge / arc pieces")
    relative: int = param(0, choices=(0, 1), doc="1 = relative (lowercase) path commands")


@register
class Shapes(Task[ShapesParams]):
    name = "shapes"
    answer_kind = "choice"
    description = ("An SVG path draws one shape. Work out which shape it is; when several "
                   "names fit, choose the most specific one.")
    answer_format = "Final Answer: (A) - (Z)"
    Params = ShapesParams

    def check_consistency(self, p: ShapesParams) -> None:
        if p.min_scale > p.max_scale:
            raise UserError("task 'shapes': min_scale must be <= max_scale, got "
                            f"{p.min_scale} > {p.max_scale}")

    def generate(self, p: ShapesParams, rng: random.Random) -> TestCase:
        shape = p.shape_type if p.shape_type >= 0 else rng.choice(sorted(SHAPES))
        extra = p.split_edges
        start, commands, closed = _canonical(shape, rng, extra)
        commands = _split_lines(start, commands, closed, extra, rng)
        rotation = math.radians(rng.uniform(0, p.max_rotation))
        place = _Placement(rotation, rng.uniform(p.min_scale, p.max_scale),
                           rng.uniform(-p.max_offset, p.max_offset),
                           rng.uniform(-p.max_offset, p.max_offset))
        path = render_path(start, commands, closed, place, bool(p.relative))
        names = [SHAPES[shape]] + rng.sample([n for k, n in SHAPES.items() if k != shape],
                                             p.choice_count - 1)
        rng.shuffle(names)
        labels = option_labels(len(names))
        text = (f'This SVG path element draws a single shape:\n<path d="{path}" fill="none" stroke="black" />\n\n'
                f"Which shape does it draw?\n\nOptions:\n{format_options(names)}")
        return TestCase(
            input=text, target=labels[names.index(SHAPES[shape])], response_enum=labels,
            guess_chance=1 / len(labels),
            genresult={"shape": SHAPES[shape], "commands": len(commands) + 1 + closed,
                       "rotation_deg": round(math.degrees(rotation), 1), "scale": round(place.scale, 1),
                       "relative": bool(p.relative), "split_edges": extra},
        )
