"""cars: people sit in a row of parked cars, then move around; which car is X in?

The cars are numbered 1..N from the front. Colours and brands repeat along the
row (about N/2 of each), but no two cars share both, so "the blue BMW" always
names one car, and "the blue car" / "the BMW" are used only when they do too.
Moves name their destination in one of seven ways (the `operations` bitmask);
confounding sentences mention people and cars but change nothing. About half of
the moves involve the person asked about, so more moves really means more state
changes to track for the answer.

Relative moves are measured from where the person sits now: "two cars back",
"the car directly behind Ana's car", "the nearest red car behind them". Whenever a
relative kind (4, 8, 16, 64) is enabled, the last move is one of them and moves the
person asked about, so the answer is never simply the last car number written next
to their name: it has to be worked out from their position before that move.
With only absolute kinds (1, 2, 32) enabled the last mention does decide the
answer; such configs measure reading, not tracking (docs/tasks.md).
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Iterator

from resolver.core import UserError
from resolver.tasks import Task, TestCase, param, register
from resolver.tasks.base import shuffled_rounds
from resolver.tasks.vocab import load_json, load_lines, number_words

# Operation bits (docs/tasks.md): 8 and 16 are this project's person-relative and occupancy moves.
OPERATIONS = {
    1: "POSITION_ABSOLUTE",
    2: "POSITION_REFERENCE",
    4: "POSITION_RELATIVE",
    8: "PERSON_RELATIVE",
    16: "OCCUPANCY",
    32: "ATTRIBUTE_ABSOLUTE",
    64: "ATTRIBUTE_RELATIVE",
}
ALL_OPERATIONS = sum(OPERATIONS)


@dataclass(frozen=True, slots=True, kw_only=True)
class CarsParams:
    cars: int = param(5, low=3, high=12, doc="cars in the row")
    people: int = param(4, low=1, high=12, doc="people seated at the start")
    moves: int = param(6, low=0, high=60, doc="move sentences")
    operations: int = param(ALL_OPERATIONS, low=1, high=ALL_OPERATIONS,
                            doc="bitmask of move kinds: " + ", ".join(f"{k} {v}" for k, v in OPERATIONS.items()))
    confounders: int = param(2, low=0, high=40, doc="sentences that change nothing")


def _article(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"


def _car_count_words(k: int) -> str:
    return "one car" if k == 1 else f"{number_words(k)} cars"


class _Lot:
    """The state of one problem: car descriptions and where everyone sits."""

    def __init__(self, cars: int, colours: list[str], brands: list[str], seats: dict[str, int]):
        self.cars = cars
        self.colours = colours  # colours[i] is car i+1's colour
        self.brands = brands
        self.seats = seats

    def describe(self, car: int, rng: random.Random) -> str:
        """An unambiguous way to name a car by its attributes: colour and brand, or
        one of them when no other car shares it."""
        colour, brand = self.colours[car - 1], self.brands[car - 1]
        forms = [f"the {colour} {brand}"]
        if self.colours.count(colour) == 1:
            forms.append(f"the {colour} car")
        if self.brands.count(brand) == 1:
            forms.append(f"the {brand}")
        return rng.choice(forms)


# ---- one function per operation: (lot, mover, rng) -> (sentence, destination) or None
def _absolute(lot: _Lot, mover: str, rng: random.Random) -> tuple[str, int]:
    dest = rng.randint(1, lot.cars)
    return f"{mover} moves to car {dest}.", dest


def _reference(lot: _Lot, mover: str, rng: random.Random) -> tuple[str, int]:
    refs = [("the front car", 1), ("the last car", lot.cars),
            ("the car just behind the front car", 2),
            ("the car just in front of the last car", lot.cars - 1)]
    if lot.cars % 2 == 1:
        refs.append(("the middle car", (lot.cars + 1) // 2))
    phrase, dest = rng.choice(refs)
    return f"{mover} moves to {phrase}.", dest


def _relative(lot: _Lot, mover: str, rng: random.Random) -> tuple[str, int]:
    here = lot.seats[mover]
    steps = [d for d in (-3, -2, -1, 1, 2, 3) if 1 <= here + d <= lot.cars]
    d = rng.choice(steps)
    way = "back" if d > 0 else "forward"
    return f"{mover} moves {_car_count_words(abs(d))} {way}.", here + d


def _person_relative(lot: _Lot, mover: str, rng: random.Random) -> tuple[str, int] | None:
    others = [p for p in lot.seats if p != mover]
    if not others:
        return None
    other = rng.choice(others)
    there = lot.seats[other]
    options = [(f"{mover} moves into the same car as {other}.", there)]
    if there < lot.cars:
        options.append((f"{mover} moves to the car directly behind {other}'s car.", there + 1))
    if there > 1:
        options.append((f"{mover} moves to the car directly in front of {other}'s car.", there - 1))
    return rng.choice(options)


def _attribute_absolute(lot: _Lot, mover: str, rng: random.Random) -> tuple[str, int]:
    dest = rng.randint(1, lot.cars)
    return f"{mover} moves to {lot.describe(dest, rng)}.", dest


def _attribute_relative(lot: _Lot, mover: str, rng: random.Random) -> tuple[str, int] | None:
    """The nearest car of a colour or brand in front of or behind the mover's car."""
    here = lot.seats[mover]
    choices = []
    for way, cars in (("behind", range(here + 1, lot.cars + 1)), ("in front of", range(here - 1, 0, -1))):
        for attrs, word in ((lot.colours, "{} car"), (lot.brands, "{}")):
            seen = []
            for car in cars:  # nearest first
                if attrs[car - 1] not in seen:
                    seen.append(attrs[car - 1])
                    choices.append((way, word.format(attrs[car - 1]), car))
    if not choices:
        return None
    way, what, dest = rng.choice(choices)
    return f"{mover} moves to the nearest {what} {way} them.", dest


def _occupancy(lot: _Lot, people: list[str], rng: random.Random, source: int | None = None,
               dest: int | None = None) -> tuple[str, list[str]]:
    """Everyone in one occupied car moves to another car: (sentence, people moved)."""
    if source is None:
        source = rng.choice(sorted(set(lot.seats.values())))
    if dest is None:
        dest = rng.choice([c for c in range(1, lot.cars + 1) if c != source])
    moved = [p for p in people if lot.seats[p] == source]
    for p in moved:
        lot.seats[p] = dest
    return f"Everyone in car {source} moves to car {dest}.", moved


_PERSON_MOVES = {1: _absolute, 2: _reference, 4: _relative, 8: _person_relative,
                 32: _attribute_absolute, 64: _attribute_relative}
# Kinds whose destination depends on where someone sits now; the last move uses one
# (occupancy only when no other can reach the car: its sentence names the new car).
_STATEFUL = (4, 8, 64, 16)


def _ways_to(lot: _Lot, mover: str, dest: int, op: int) -> list[str]:
    """Sentences of kind `op` that take `mover` from their car to `dest` (maybe none)."""
    here = lot.seats[mover]
    if op == 4:
        way = "back" if dest > here else "forward"
        return [f"{mover} moves {_car_count_words(abs(dest - here))} {way}."]
    if op == 8:
        out = []
        for other, there in lot.seats.items():
            if other == mover:
                continue
            if there == dest:
                out.append(f"{mover} moves into the same car as {other}.")
            for gap, words in ((1, "directly"), (2, "two cars")):
                if there == dest - gap:
                    out.append(f"{mover} moves to the car {words} behind {other}'s car.")
                if there == dest + gap:
                    out.append(f"{mover} moves to the car {words} in front of {other}'s car.")
        return out
    if op == 64:
        step = 1 if dest > here else -1
        between = range(here + step, dest, step)
        way = "behind" if step > 0 else "in front of"
        out = []
        for attrs, word in ((lot.colours, "{} car"), (lot.brands, "{}")):
            if all(attrs[c - 1] != attrs[dest - 1] for c in between):
                out.append(f"{mover} moves to the nearest {word.format(attrs[dest - 1])} {way} them.")
        return out
    return []


def _final_move(lot: _Lot, people: list[str], target: str, kinds: list[int], rng: random.Random,
                dest: int | None = None) -> tuple[str, int, list[str]]:
    """The person asked about moves, by a kind whose destination depends on where
    someone sits now, to `dest` (or a car drawn uniformly from the others). The
    caller draws `dest` uniformly, so the answer is spread evenly over the cars even
    though earlier moves crowd the middle; a start seat is uniform, so with one move
    "uniform over the other cars" is uniform too."""
    here = lot.seats[target]
    dests = [c for c in range(1, lot.cars + 1) if c not in (here, dest)]
    rng.shuffle(dests)
    for car in ([dest] if dest not in (None, here) else []) + dests:
        options = [(op, sentence) for op in kinds if op != 16 for sentence in _ways_to(lot, target, car, op)]
        if options:
            op, sentence = rng.choice(options)
            lot.seats[target] = car
            return sentence, op, [target]
        if 16 in kinds:  # everyone in the person's car moves: the only stateful kind left
            sentence, moved = _occupancy(lot, list(lot.seats), rng, source=here, dest=car)
            return sentence, 16, moved
    raise AssertionError("unreachable: a relative move always reaches another car")  # pragma: no cover


def _confounder(lot: _Lot, rng: random.Random) -> str:
    person = rng.choice(list(lot.seats))
    car = rng.randint(1, lot.cars)
    return rng.choice((
        f"{person} thinks about moving to car {car} but stays put.",
        f"{person} waves at whoever is in car {car}.",
        f"{person} admires {lot.describe(car, rng)} but does not move.",
        f"The radio in car {car} is switched on.",
        f"{person} checks the mirrors and stays in the same seat.",
    ))


@register
class Cars(Task[CarsParams]):
    name = "cars"
    version = 2  # attributes repeat, attribute-relative moves from the person, last move stateful
    answer_kind = "integer"
    description = ("People sit in a row of parked cars and then move between them. "
                   "Track every move and say which car the named person ends up in.")
    answer_format = "Final Answer: <car number>"
    Params = CarsParams

    def check_consistency(self, p: CarsParams) -> None:
        if p.operations == 8 and p.people < 2:
            raise UserError("task 'cars': operations=8 (PERSON_RELATIVE only) needs people >= 2")

    def cases(self, p: CarsParams, rng: random.Random, count: int) -> Iterator[TestCase]:
        """Answers come from shuffled rounds of 1..cars (where a relative kind lets the
        generator steer the last move), so every car is the answer equally often."""
        answers = shuffled_rounds(range(1, p.cars + 1), rng)
        for _ in range(count):
            yield self._case(p, rng, next(answers))

    def generate(self, p: CarsParams, rng: random.Random) -> TestCase:
        return self._case(p, rng, rng.randint(1, p.cars))

    def _case(self, p: CarsParams, rng: random.Random, answer: int) -> TestCase:
        """One problem; when a relative kind is enabled and the person moves, they end in
        car `answer` (the last two moves steer there)."""
        lot, people, start_text = self._seat(p, rng)
        target = rng.choice(people)
        enabled = [bit for bit in OPERATIONS if p.operations & bit]
        # PERSON_RELATIVE needs someone else to move relative to
        stateful = [op for op in _STATEFUL if op in enabled and (op != 8 or len(people) > 1)]
        if stateful and p.moves == 1 and lot.seats[target] == answer:
            # one move must leave the start car: seat the person elsewhere (still uniform)
            lot.seats[target] = rng.choice([c for c in range(1, lot.cars + 1) if c != answer])
            start_text = [f"{who} is in car {lot.seats[who]}." for who in people]
        start = lot.seats[target]
        events, used, target_moves = [], [], 0
        for i in range(p.moves):
            if stateful and i == p.moves - 1:
                sentence, op, moved = _final_move(lot, people, target, stateful, rng, answer)
            elif stateful and i == p.moves - 2:
                sentence, op, moved = self._set_up(lot, people, target, enabled, stateful, answer, rng)
            else:
                sentence, op, moved = self._move(lot, people, target, enabled, rng)
            events.append(sentence)
            used.append(OPERATIONS[op])
            target_moves += target in moved
        for _ in range(p.confounders):
            events.insert(rng.randint(0, len(events)), _confounder(lot, rng))
        text = self._render(lot, people, start_seats=start_text, events=events, target=target)
        answer = lot.seats[target]
        return TestCase(
            input=text, target=str(answer),
            response_enum=[str(i) for i in range(1, lot.cars + 1)],
            guess_chance=1 / lot.cars,
            genresult={"person": target, "start_car": start, "operations": used,
                       "target_moves": target_moves, "confounders": p.confounders},
        )

    def _seat(self, p: CarsParams, rng: random.Random) -> tuple[_Lot, list[str], list[str]]:
        cars = p.cars
        vocab = load_json("cars.json")
        # Colours and brands repeat along the row; each (colour, brand) pair is unique.
        each = max(2, (cars + 1) // 2)
        pairs = [(c, b) for c in rng.sample(vocab["colours"], each) for b in rng.sample(vocab["brands"], each)]
        colours, brands = (list(x) for x in zip(*rng.sample(pairs, cars)))
        people = rng.sample(load_lines("names.txt"), p.people)
        seats = {who: rng.randint(1, cars) for who in people}
        start_text = [f"{who} is in car {seats[who]}." for who in people]
        return _Lot(cars, colours, brands, seats), people, start_text

    def _set_up(self, lot: _Lot, people: list[str], target: str, enabled: list[int], stateful: list[int],
                answer: int, rng: random.Random) -> tuple[str, int, list[str]]:
        """The move before the last: any move after which the person is not yet in car
        `answer` and a relative kind (not occupancy, whose sentence names the car) can
        take them there next."""
        before = dict(lot.seats)
        direct = [op for op in stateful if op != 16]
        for _ in range(100):
            sentence, op, moved = self._move(lot, people, target, enabled, rng)
            if lot.seats[target] != answer and (
                    not direct or any(_ways_to(lot, target, answer, k) for k in direct)):
                return sentence, op, moved
            lot.seats.clear()
            lot.seats.update(before)
        # Rare (only when the enabled kinds can hardly reach the car): the person moves
        # somewhere else now; the last move may then need occupancy.
        away = rng.choice([c for c in range(1, lot.cars + 1) if c not in (answer, lot.seats[target])])
        return _final_move(lot, people, target, stateful, rng, away)

    def _move(self, lot: _Lot, people: list[str], target: str, enabled: list[int],
              rng: random.Random) -> tuple[str, int, list[str]]:
        """Apply one random move of the `enabled` kinds; returns (sentence, op bit, people
        who moved)."""
        for attempt in range(100):
            op = rng.choice(enabled)
            if op == 16:
                sentence, moved = _occupancy(lot, people, rng)
                return sentence, op, moved
            mover = target if rng.random() < 0.5 or len(people) == 1 else rng.choice(people)
            result = _PERSON_MOVES[op](lot, mover, rng)
            # A move to the car the person already sits in reads like a trick; redraw it.
            if result is not None and (result[1] != lot.seats[mover] or attempt == 99):
                sentence, dest = result
                lot.seats[mover] = dest
                return sentence, op, [mover]
        # Only reachable when every draw was a no-op person-relative move: fall back.
        sentence, dest = _absolute(lot, target, rng)
        lot.seats[target] = dest
        return sentence, 1, [target]

    @staticmethod
    def _render(lot: _Lot, people: list[str], start_seats: list[str], events: list[str], target: str) -> str:
        n = lot.cars
        cars = " ".join(f"Car {i} is {_article(lot.colours[i - 1])} {lot.colours[i - 1]} {lot.brands[i - 1]}."
                        for i in range(1, n + 1))
        parts = [
            f"{number_words(n).capitalize()} cars are parked in a row, numbered 1 to {n} "
            f"from front to back: car 1 is at the front, \"forward\" means towards car 1 and "
            f"\"back\" means towards car {n}. {cars}",
            "At the start: " + " ".join(start_seats),
        ]
        if events:
            parts.append("Then, in this order:\n" + "\n".join(events))
        parts.append(f"Which car is {target} in at the end?")
        return "\n\n".join(parts)
