"""cars: people sit in a row of parked cars, then move around; which car is X in?

The cars are numbered 1..N from the front. Each car has a unique colour and a
unique brand, so "the blue BMW", "the blue car" and "the BMW" all name one car.
Moves name their destination in one of seven ways (the `operations` bitmask);
confounding sentences mention people and cars but change nothing. About half of
the moves involve the person asked about, so more moves really means more state
changes to track for the answer.
"""
from __future__ import annotations

import random

from resolver.errors import UserError
from resolver.tasks import Param, Task, TestCase, register
from resolver.tasks.vocab import load_json, load_lines, number_words

# Operation bits (spec 01): 8 and 16 are this project's person-relative and occupancy moves.
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
        """One of three unambiguous ways to name a car by its attributes."""
        colour, brand = self.colours[car - 1], self.brands[car - 1]
        return rng.choice((f"the {colour} {brand}", f"the {colour} car", f"the {brand}"))


# ---- one function per operation: (lot, mover, rng) -> (sentence, destination) or None
def _absolute(lot, mover, rng):
    dest = rng.randint(1, lot.cars)
    return f"{mover} moves to car {dest}.", dest


def _reference(lot, mover, rng):
    refs = [("the front car", 1), ("the last car", lot.cars),
            ("the car just behind the front car", 2),
            ("the car just in front of the last car", lot.cars - 1)]
    if lot.cars % 2 == 1:
        refs.append(("the middle car", (lot.cars + 1) // 2))
    phrase, dest = rng.choice(refs)
    return f"{mover} moves to {phrase}.", dest


def _relative(lot, mover, rng):
    here = lot.seats[mover]
    steps = [d for d in (-3, -2, -1, 1, 2, 3) if 1 <= here + d <= lot.cars]
    d = rng.choice(steps)
    way = "back" if d > 0 else "forward"
    return f"{mover} moves {_car_count_words(abs(d))} {way}.", here + d


def _person_relative(lot, mover, rng):
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


def _attribute_absolute(lot, mover, rng):
    dest = rng.randint(1, lot.cars)
    return f"{mover} moves to {lot.describe(dest, rng)}.", dest


def _attribute_relative(lot, mover, rng):
    pairs = [(a, d) for a in range(1, lot.cars + 1) for d in (-2, -1, 1, 2)
             if 1 <= a + d <= lot.cars]
    anchor, d = rng.choice(pairs)
    where = "behind" if d > 0 else "in front of"
    gap = "directly" if abs(d) == 1 else "two cars"
    return f"{mover} moves to the car {gap} {where} {lot.describe(anchor, rng)}.", anchor + d


def _occupancy(lot, people, rng):
    """Everyone in one occupied car moves to another car: (sentence, people moved)."""
    source = rng.choice(sorted(set(lot.seats.values())))
    dest = rng.choice([c for c in range(1, lot.cars + 1) if c != source])
    moved = [p for p in people if lot.seats[p] == source]
    for p in moved:
        lot.seats[p] = dest
    return f"Everyone in car {source} moves to car {dest}.", moved


_PERSON_MOVES = {1: _absolute, 2: _reference, 4: _relative, 8: _person_relative,
                 32: _attribute_absolute, 64: _attribute_relative}


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
class Cars(Task):
    name = "cars"
    answer_kind = "integer"
    description = ("People sit in a row of parked cars and then move between them. "
                   "Track every move and say which car the named person ends up in.")
    answer_format = "Final Answer: <car number>"
    params = (
        Param("cars", int, 5, low=3, high=12, doc="cars in the row"),
        Param("people", int, 4, low=1, high=12, doc="people seated at the start"),
        Param("moves", int, 6, low=0, high=60, doc="move sentences"),
        Param("operations", int, ALL_OPERATIONS, low=1, high=ALL_OPERATIONS,
              doc="bitmask of move kinds: " + ", ".join(f"{k} {v}" for k, v in OPERATIONS.items())),
        Param("confounders", int, 2, low=0, high=40, doc="sentences that change nothing"),
    )

    def check_consistency(self, params: dict) -> None:
        if params["operations"] == 8 and params["people"] < 2:
            raise UserError("task 'cars': operations=8 (PERSON_RELATIVE only) needs people >= 2")

    def generate(self, params: dict, rng: random.Random) -> TestCase:
        lot, people, start_text = self._seat(params, rng)
        target = rng.choice(people)
        start = lot.seats[target]
        enabled = [bit for bit in OPERATIONS if params["operations"] & bit]
        events, used, target_moves = [], [], 0
        for _ in range(params["moves"]):
            sentence, op, moved = self._move(lot, people, target, enabled, rng)
            events.append(sentence)
            used.append(OPERATIONS[op])
            target_moves += target in moved
        for _ in range(params["confounders"]):
            events.insert(rng.randint(0, len(events)), _confounder(lot, rng))
        text = self._render(lot, people, start_seats=start_text, events=events, target=target)
        answer = lot.seats[target]
        return TestCase(
            input=text, target=str(answer),
            response_enum=[str(i) for i in range(1, lot.cars + 1)],
            guess_chance=1 / lot.cars,
            genresult={"person": target, "start_car": start, "operations": used,
                       "target_moves": target_moves, "confounders": params["confounders"]},
        )

    def _seat(self, params, rng):
        cars = params["cars"]
        vocab = load_json("cars.json")
        colours = rng.sample(vocab["colours"], cars)
        brands = rng.sample(vocab["brands"], cars)
        people = rng.sample(load_lines("names.txt"), params["people"])
        seats = {p: rng.randint(1, cars) for p in people}
        start_text = [f"{p} is in car {seats[p]}." for p in people]
        return _Lot(cars, colours, brands, seats), people, start_text

    def _move(self, lot, people, target, enabled, rng):
        """Apply one random enabled move; returns (sentence, op bit, people who moved)."""
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
    def _render(lot, people, start_seats, events, target) -> str:
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
