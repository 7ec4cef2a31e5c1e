"""lesson-by-date, frontmatter-missing, frontmatter-schema, type-mismatch, missing-section."""

from __future__ import annotations

import pytest
from test_rules_support import diagnostics, findings, isolated_openclaw  # noqa: F401

DECISION = """---
date: 2026-02-08
type: decision
status: active
tags: [community, monetization]
---
# Build community before monetizing

## Context
Considered launching a paid course, but trust was not established yet.

## Decision
Grow the community first, then push the paid course.
"""

LESSON = """---
type: lesson
---
# Cron Scheduling Rules

## US Market Timezone Alignment (2026-02-13)
Beijing time maps to US trading days Tue-Sat.
Set cron to `2-6`.
Checked against the exchange calendar.
"""


def fm(body: str, **props) -> str:
    lines = ["---"] + [f"{k}: {v}" for k, v in props.items()] + ["---", body]
    return "\n".join(lines)


# (case id, files, rule, expected [(path, line)])
CASES = [
    # lesson-by-date
    ("lesson named by day", {"memory/lessons/2026-02-14.md": LESSON}, "lesson-by-date",
     [("memory/lessons/2026-02-14.md", 1)]),
    ("lesson named by week", {"memory/lessons/week-07.md": LESSON}, "lesson-by-date",
     [("memory/lessons/week-07.md", 1)]),
    ("lesson named by ISO week", {"memory/lessons/2026-W07.md": LESSON}, "lesson-by-date",
     [("memory/lessons/2026-W07.md", 1)]),
    ("lesson named lessons-month", {"memory/lessons/lessons-2026-02.md": LESSON},
     "lesson-by-date", [("memory/lessons/lessons-2026-02.md", 1)]),
    ("near miss: topic name", {"memory/lessons/cron-scheduling.md": LESSON}, "lesson-by-date", []),
    ("near miss: topic holding a year", {"memory/lessons/2026-migration-to-postgres.md": LESSON},
     "lesson-by-date", []),
    ("near miss: dated decision", {"memory/decisions/2026-02-14.md": DECISION},
     "lesson-by-date", []),
    ("near miss: journal", {"memory/2026-02-14.md": "# 2026-02-14\n"}, "lesson-by-date", []),

    # frontmatter-missing
    ("decision without frontmatter", {"memory/decisions/a.md": "# A\n\n## Context\nx\n"},
     "frontmatter-missing", [("memory/decisions/a.md", 1)]),
    ("person without frontmatter", {"memory/people/alice.md": "# Alice\n"},
     "frontmatter-missing", [("memory/people/alice.md", 1)]),
    ("near miss: knowledge note", {"memory/semantic/facts.md": "# Facts\n"},
     "frontmatter-missing", []),
    ("near miss: invalid block is frontmatter-invalid's",
     {"memory/decisions/a.md": "---\ntags: [a\n---\n# A\n"}, "frontmatter-missing", []),
    ("near miss: '---' later in the body is no frontmatter but the note has one",
     {"memory/decisions/a.md": DECISION + "\n---\n"}, "frontmatter-missing", []),

    # frontmatter-schema
    ("decision missing status", {"memory/decisions/a.md": DECISION.replace("status: active\n", "")},
     "frontmatter-schema", [("memory/decisions/a.md", 1)]),
    ("status outside its set", {"memory/decisions/a.md": DECISION.replace("active", "done")},
     "frontmatter-schema", [("memory/decisions/a.md", 4)]),
    ("date that is text", {"memory/decisions/a.md": DECISION.replace("2026-02-08", "last week")},
     "frontmatter-schema", [("memory/decisions/a.md", 2)]),
    ("tags as text", {"memory/decisions/a.md": DECISION.replace("[community, monetization]",
                                                                "community")},
     "frontmatter-schema", [("memory/decisions/a.md", 5)]),
    ("tags with a number item",
     {"memory/decisions/a.md": DECISION.replace("[community, monetization]", "[community, 42]")},
     "frontmatter-schema", [("memory/decisions/a.md", 5)]),
    ("required and empty", {"memory/decisions/a.md": DECISION.replace("status: active",
                                                                      "status:")},
     "frontmatter-schema", [("memory/decisions/a.md", 4)]),
    ("project status outside its set",
     {"memory/projects/site.md": fm("# Site\n", type="project", status="active-ish")},
     "frontmatter-schema", [("memory/projects/site.md", 3)]),
    ("common property on any type: description as a list",
     {"memory/people/alice.md": fm("# Alice\n", type="person", description="[a, b]")},
     "frontmatter-schema", [("memory/people/alice.md", 3)]),
    ("near miss: extra properties are allowed",
     {"memory/decisions/a.md": DECISION.replace("tags:", "owner: Alice\nreviewed: true\ntags:")},
     "frontmatter-schema", []),
    ("near miss: quoted ISO date is a date",
     {"memory/decisions/a.md": DECISION.replace("2026-02-08", '"2026-02-08"')},
     "frontmatter-schema", []),
    ("near miss: wrong type value is type-mismatch's",
     {"memory/decisions/a.md": DECISION.replace("type: decision", "type: lesson")},
     "frontmatter-schema", []),
    ("near miss: unquoted link is property-link-unquoted's",
     {"memory/people/alice.md": fm("# Alice\n", type="person", aliases="[[Al]]")},
     "frontmatter-schema", []),
    ("near miss: untyped folder", {"memory/semantic/x.md": fm("# X\n", status="whatever")},
     "frontmatter-schema", []),

    # type-mismatch
    ("lesson type under decisions",
     {"memory/decisions/a.md": DECISION.replace("type: decision", "type: lesson")},
     "type-mismatch", [("memory/decisions/a.md", 3)]),
    ("type differing in case",
     {"memory/decisions/a.md": DECISION.replace("type: decision", "type: Decision")},
     "type-mismatch", [("memory/decisions/a.md", 3)]),
    ("typed note outside its folder",
     {"memory/semantic/launch.md": fm("# Launch\n", date="2026-02-08", type="decision")},
     "type-mismatch", [("memory/semantic/launch.md", 3)]),
    ("near miss: matching type", {"memory/decisions/a.md": DECISION}, "type-mismatch", []),
    ("near miss: template carries its type",
     {"templates/decision.md": fm("# {{title}}\n", type="decision")}, "type-mismatch", []),
    ("near miss: free-form type on a knowledge note",
     {"memory/semantic/x.md": fm("# X\n", type="reference")}, "type-mismatch", []),

    # missing-section
    ("decision without Decision", {"memory/decisions/a.md": DECISION.split("## Decision")[0]},
     "missing-section", [("memory/decisions/a.md", 7)]),
    ("decision without both sections",
     {"memory/decisions/a.md": DECISION.split("## Context")[0]}, "missing-section",
     [("memory/decisions/a.md", 7), ("memory/decisions/a.md", 7)]),
    ("empty Context section",
     {"memory/decisions/a.md": DECISION.replace(
         "Considered launching a paid course, but trust was not established yet.\n",
         "<!-- why -->\n")},
     "missing-section", [("memory/decisions/a.md", 9)]),
    ("section at the wrong level",
     {"memory/decisions/a.md": DECISION.replace("## Decision", "### Decision")},
     "missing-section", [("memory/decisions/a.md", 12)]),
    ("heading only inside a code block",
     {"memory/decisions/a.md": DECISION.replace("## Decision\n", "```\n## Decision\n```\n")},
     "missing-section", [("memory/decisions/a.md", 7)]),
    ("near miss: case and trailing colon differ",
     {"memory/decisions/a.md": DECISION.replace("## Context", "## context:")},
     "missing-section", []),
    ("near miss: a lesson has no required sections", {"memory/lessons/cron.md": LESSON},
     "missing-section", []),
]


@pytest.mark.parametrize("files,rule,expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_structure_rules(make_vault, files, rule, expected):
    root = make_vault(files)
    assert findings(root, rule) == sorted((rule, p, ln) for p, ln in expected)


def test_schema_messages_name_the_property(make_vault):
    root = make_vault({"memory/decisions/a.md": DECISION.replace("active", "done")
                       .replace("status:", "status:").replace("tags: [community, monetization]",
                                                              "")})
    messages = sorted(d.message for d in diagnostics(root, "frontmatter-schema"))
    assert messages == ["'status' is 'done'; allowed: proposed, active, superseded, rejected",
                        "required property 'tags' is missing (decision)"]


def test_schema_and_sections_come_from_vaultkit_toml(make_vault):
    root = make_vault({
        "vaultkit.toml": """
[types.decision]
folder = "{memory}/decisions"
sections = ["Context", "Decision", "Consequences"]
[types.decision.properties]
owner = {type = "string", required = true}
""",
        "memory/decisions/a.md": DECISION,
    })
    assert findings(root, "frontmatter-schema", "missing-section") == [
        ("frontmatter-schema", "memory/decisions/a.md", 1),
        ("missing-section", "memory/decisions/a.md", 7),
    ]


def test_severity_override_from_vaultkit_toml(make_vault):
    root = make_vault({"vaultkit.toml": '[severity]\ntype-mismatch = "warning"\n',
                       "memory/decisions/a.md": DECISION.replace("type: decision", "type: lesson")})
    (d,) = diagnostics(root, "type-mismatch")
    assert d.severity == "warning"
    assert "move it to memory/lessons/" in d.message


def test_memory_only_layout_types_by_folder(make_vault):
    root = make_vault({"vaultkit.toml": 'memory-dir = "."\n',
                       "decisions/a.md": DECISION.replace("type: decision", "type: person"),
                       "lessons/2026-02-14.md": LESSON})
    assert findings(root, "type-mismatch", "lesson-by-date") == [
        ("lesson-by-date", "lessons/2026-02-14.md", 1),
        ("type-mismatch", "decisions/a.md", 3),
    ]


TYPED_NOTE_RULES = ("frontmatter-missing", "frontmatter-schema", "type-mismatch",
                    "missing-section", "lesson-by-date", "lesson-entry-undated", "orphan-note")


def test_a_folder_page_is_no_typed_note(make_vault):
    """A typed folder's README.md, index.md or _index.md (any case) explains the folder, as
    real workspaces keep one in memory/people/: no typed-note rule reads it as a person or
    a decision, and the person note beside it is still reported."""
    root = make_vault({
        "memory/people/README.md": "# People\n\nOne note per person: [[dana]].\n",
        "memory/people/dana.md": "# Dana\n\nDesigner; prefers async review.\n",
        "memory/decisions/index.md": "# Decisions\n\nWhat was decided, one note each.\n",
        "memory/decisions/_index.md": fm("# Decisions\n", title="Decisions", type="index"),
        "memory/projects/Readme.md": fm("# Projects\n", type="person"),
        "memory/lessons/readme.md": "# Lessons\n\n## Writing one\nDate it.\n",
    })
    assert findings(root, *TYPED_NOTE_RULES) == [
        ("frontmatter-missing", "memory/people/dana.md", 1)]
