"""The question's cues in the ranking: a turn said by the person it names, the kind of
answer a "who" or "how many" question asks for, and what the person asked about says for
"what did …" and "what does … like" (docs/commands/search.md#cues)."""

from __future__ import annotations

import pytest

from vaultkit.memory.search import search_vault
from vaultkit.vault.loader import load_vault


def make_vault(root, notes: dict[str, str]):
    (root / "memory").mkdir(parents=True)
    (root / "MEMORY.md").write_text("# MEMORY\n\nLong-term memory.\n")
    for name, body in notes.items():
        (root / "memory" / name).write_text(body)
    return root


def paths(root, query):
    return [h.path for h in search_vault(load_vault(root, root=root), query, min_score=0.0)]


# a.md sorts first and repeats the shared words: it ranks first unless a cue lifts b.md
SPEAKER_NOTES = {
    "a.md": "# Chat\n\n- **Ben**: Ana, your garden looks great!\n",
    "b.md": "# Chat\n\n- **Ana**: my garden is full of tomatoes.\n",
}


def test_a_turn_said_by_the_person_the_question_names_ranks_first(tmp_path):
    root = make_vault(tmp_path / "v", SPEAKER_NOTES)
    assert paths(root, "What does Ana grow in her garden?")[0] == "memory/b.md"


def test_the_speakers_name_alone_does_not_lift(tmp_path):
    # Ana speaks in both, and in a.md about the garden: only a turn of hers holding another
    # query word is lifted, so a.md keeps its place
    root = make_vault(tmp_path / "v", {
        "a.md": "# Chat\n\n- **Ana**: the garden, the garden! Such work.\n",
        "b.md": "# Chat\n\n- **Ana**: hello there.\n- **Ben**: my garden is full of tomatoes.\n",
    })
    assert paths(root, "What does Ana grow in her garden?")[0] == "memory/a.md"


WHO_NOTES = {
    "a.md": "# Ana\n\n- **Ana**: I went hiking, and hiking was great fun.\n",
    "b.md": "# Ana\n\n- **Ana**: I went hiking with my colleague Rob, great fun.\n",
}
COUNT_NOTES = {
    "a.md": "# Ana\n\n- **Ana**: my cats, my cats are lovely.\n",
    "b.md": "# Ana\n\n- **Ana**: I have three cats at home.\n",
}


def test_who_favours_the_chunk_naming_someone_else(tmp_path):
    root = make_vault(tmp_path / "v", WHO_NOTES)
    assert paths(root, "Who did Ana go hiking with?")[0] == "memory/b.md"
    assert paths(root, "Did Ana go hiking?")[0] == "memory/a.md"  # no cue: as before


def test_how_many_favours_the_chunk_with_a_number(tmp_path):
    root = make_vault(tmp_path / "v", COUNT_NOTES)
    assert paths(root, "How many cats does Ana have?")[0] == "memory/b.md"
    assert paths(root, "Does Ana have cats?")[0] == "memory/a.md"


# both are turns of Ana's holding the query's other word; a.md repeats it, so it ranks
# first unless a cue lifts b.md
DID_NOTES = {
    "a.md": "# Chat\n\n- **Ana**: the party, the party! Such fun.\n",
    "b.md": "# Chat\n\n- **Ana**: I made soup for the party.\n",
}
LIKES_NOTES = {
    "a.md": "# Chat\n\n- **Ana**: the garden, the garden! Such work.\n",
    "b.md": "# Chat\n\n- **Ana**: I love the garden in spring.\n",
}


def test_what_did_favours_a_turn_in_the_first_person_past(tmp_path):
    root = make_vault(tmp_path / "v", DID_NOTES)
    assert paths(root, "What did Ana bring to the party?")[0] == "memory/b.md"
    assert paths(root, "Did Ana go to the party?")[0] == "memory/a.md"  # no cue


def test_what_did_lifts_only_a_turn_of_the_person_asked_about(tmp_path):
    root = make_vault(tmp_path / "v", {
        "a.md": DID_NOTES["a.md"],
        "b.md": "# Chat\n\n- **Ana**: hello.\n- **Ben**: I made soup for the party.\n",
    })
    assert paths(root, "What did Ana bring to the party?")[0] == "memory/a.md"


def test_what_does_someone_like_favours_their_turn_with_a_liking_word(tmp_path):
    root = make_vault(tmp_path / "v", LIKES_NOTES)
    assert paths(root, "What does Ana like about her garden?")[0] == "memory/b.md"
    assert paths(root, "Does Ana have a garden?")[0] == "memory/a.md"


@pytest.mark.parametrize("query, kind", [
    ("Who did Ana go hiking with?", "who"),
    ("  whom did she call", "who"),
    ("Whose idea was it?", "who"),
    ("How many cats does Ana have?", "count"),
    ("how much did the repair cost", "count"),
    ("What did Ana say to the people who came?", "did"),
    ("what has Ana done for the team", "did"),
    ("What are Ana's hobbies?", "likes"),
    ("What is Ana's favourite book?", "likes"),
    ("What does Ana enjoy doing on weekends?", "likes"),
    ("Where did Ana meet the people who came?", None),
    ("Does Ana like tea?", None),
    ("How did Ana feel?", None),
    ("When did Ana move?", None),
])
def test_answer_kind(query, kind):
    from vaultkit.memory.search import answer_kind

    assert answer_kind(query) == kind
