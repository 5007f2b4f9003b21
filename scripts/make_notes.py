"""Write the labelled synthetic notes set (issue 18): short notes about people, and queries.

    python scripts/make_notes.py [--out scripts/lab/data/notes/notes.json]

Every query is a paraphrase of its answer note that shares few words with it beyond the
person's name (which 16 notes share), and every query has a distractor note that shares the
query's own words but answers something else. So BM25 alone is drawn to the distractor, and
dense search must see through the wording: a shape where neither retriever is enough.

The set is made from fixed lists with a fixed seed: rerunning gives the same file.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

NAMES = [
    "Amara",
    "Bastian",
    "Celine",
    "Dorian",
    "Esme",
    "Felix",
    "Greta",
    "Hugo",
    "Imogen",
    "Jasper",
    "Kiran",
    "Leona",
    "Marek",
    "Nerys",
    "Otto",
    "Perrin",
    "Quentin",
    "Rhea",
    "Silas",
    "Thea",
    "Ulric",
    "Valentina",
    "Wilhelm",
    "Xenia",
    "Yannick",
    "Zelda",
    "Aurelio",
    "Brigid",
    "Casimir",
    "Delphine",
]

CITIES = [
    "Lisbon",
    "Oslo",
    "Nairobi",
    "Lima",
    "Hanoi",
    "Quito",
    "Tbilisi",
    "Porto",
    "Krakow",
    "Seoul",
    "Cairo",
    "Riga",
]
JOBS = [
    ("paramedic", "the ambulance service"),
    ("pastry chef", "a hotel kitchen"),
    ("tax adviser", "a small accounting firm"),
    ("locksmith", "a family business"),
    ("radiographer", "the county hospital"),
    ("bus driver", "the city transport company"),
    ("translator", "a publishing house"),
    ("electrician", "a building contractor"),
    ("librarian", "the university"),
    ("vet nurse", "an animal clinic"),
]
FOODS = ["peanuts", "shellfish", "sesame", "kiwi", "eggs", "strawberries", "celery", "mustard"]
PETS = [
    ("tabby cat", "Biscuit"),
    ("greyhound", "Comet"),
    ("parrot", "Pip"),
    ("tortoise", "Sheldon"),
    ("pair of rabbits", "Salt and Pepper"),
    ("corgi", "Waffles"),
    ("goldfish", "Bubbles"),
    ("ferret", "Ziggy"),
]
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
]
COMMUTES = [
    "cycles to the office along the canal path",
    "takes the early ferry across the bay",
    "rides the tram for forty minutes",
    "walks in, it is only ten minutes on foot",
    "drives an old hatchback there",
    "catches the regional train at 7:10",
]
INSTRUMENTS = ["cello", "banjo", "trumpet", "harp", "accordion", "drums", "violin", "ukulele"]

# relation: (answer notes, queries, distractor notes); {n} the person, {o} someone else
RELATIONS: dict[str, tuple[list[str], list[str], list[str]]] = {
    "home": (
        [
            "{n} relocated to {city} last spring and rents a flat near the harbour.",
            "{n}'s new address is in {city}, a short way from the old town.",
        ],
        ["Where does {n} live these days?", "Which city is {n} based in now?"],
        [
            "{o} told {n} to live a little and take a few days off these days.",
            "{n} is based in the marketing team now, not in sales; ask about the city project.",
        ],
    ),
    "job": (
        [
            "{n} got hired as a {job} at {place} after the training course.",
            "{n} spends the shifts as a {job} with {place}.",
        ],
        ["What does {n} do for a living?", "What is {n}'s occupation?"],
        [
            "{n} has to do the living room floors before the guests come.",
            "{n} filled in the occupation field wrong on the insurance form.",
        ],
    ),
    "allergy": (
        [
            "{n} breaks out in hives after a single bite of {food}.",
            "Keep {food} away from {n}: even a trace means a trip to the clinic.",
        ],
        ["Which food is {n} allergic to?", "What must {n} never eat?"],
        [
            "{n} is writing a food blog about allergic reactions in pets.",
            "{n} must never eat lunch at the desk again, said {o}.",
        ],
    ),
    "pet": (
        [
            "{n} adopted a {pet} called {petname} from the rescue shelter.",
            "{petname}, {n}'s {pet}, chewed through another charger cable.",
        ],
        ["What kind of animal does {n} keep at home?", "Does {n} have a pet, and which one?"],
        [
            "{n} watched a documentary about the kind of animal that sleeps all winter at home.",
            "{n} asked whether the hotel allows a pet, and which floor is quiet.",
        ],
    ),
    "birthday": (
        [
            "{n} turns a year older on the {day} of {month}; {o} is planning the cake.",
            "{n} was born on {month} {day}.",
        ],
        ["When is {n}'s birthday?", "On what date does {n} celebrate getting older?"],
        [
            "{n} bought a birthday present for {o} at the market.",
            "{n} needs to celebrate the date the project launched, said the manager.",
        ],
    ),
    "commute": (
        ["{n} {commute} every morning.", "Most mornings {n} {commute}."],
        ["How does {n} get to work?", "What is {n}'s way of travelling to the job?"],
        [
            "{n} could not get the printer to work before the meeting.",
            "{n} is travelling to the job fair in May to recruit interns.",
        ],
    ),
    "music": (
        [
            "{n} has been practising the {instrument} on Tuesday evenings with a teacher.",
            "{n}'s neighbours hear the {instrument} every evening now.",
        ],
        ["Which instrument is {n} learning to play?", "What does {n} play musically?"],
        [
            "{n} wants to play tennis again once the sprained knee heals.",
            "{n} is learning Portuguese with an app to play along with the radio news.",
        ],
    ),
    "partner": (
        [
            "{n} and {o} got married in a small ceremony by the sea.",
            "{n} met {o} at university and they have shared a home ever since the wedding.",
        ],
        ["Who is {n}'s spouse?", "Who is {n} married to?"],
        [
            "{n} asked about the spouse discount for the gym membership.",
            "{n} is married to the idea of an early retirement, jokes {o}.",
        ],
    ),
}


def build(seed: int = 18) -> dict:
    """The notes and queries (pure, deterministic)."""
    rnd = random.Random(seed)
    notes: list[str] = []
    queries: list[dict] = []
    for i, name in enumerate(NAMES):
        other = NAMES[(i + 7) % len(NAMES)]
        job, place = rnd.choice(JOBS)
        pet, petname = rnd.choice(PETS)
        values = {
            "n": name,
            "o": other,
            "city": rnd.choice(CITIES),
            "job": job,
            "place": place,
            "food": rnd.choice(FOODS),
            "pet": pet,
            "petname": petname,
            "month": rnd.choice(MONTHS),
            "day": rnd.randint(1, 28),
            "commute": rnd.choice(COMMUTES),
            "instrument": rnd.choice(INSTRUMENTS),
        }
        for relation, (answers, asks, distractors) in RELATIONS.items():
            v = rnd.randrange(2)
            notes.append(answers[v].format(**values))
            answer = len(notes) - 1
            ask = rnd.randrange(2)  # the distractor shares the words of the query asked
            notes.append(distractors[ask].format(**values))
            queries.append(
                {
                    "query": asks[ask].format(**values),
                    "relevant": [answer],
                    "relation": relation,
                    "distractor": len(notes) - 1,
                    "person": name,
                }
            )
    return {
        "name": "notes",
        "description": (
            "Synthetic labelled notes about people (scripts/make_notes.py, seed 18): each query "
            "paraphrases one note and shares its words with a distractor note. 'relevant' and "
            "'distractor' are 0-based note numbers."
        ),
        "notes": notes,
        "queries": queries,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    default = Path(__file__).parents[1] / "scripts/lab/data/notes/notes.json"
    p.add_argument("--out", type=Path, default=default)
    args = p.parse_args(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    data = build()
    args.out.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}: {len(data['notes'])} notes, {len(data['queries'])} queries")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
