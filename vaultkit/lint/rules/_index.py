"""What selecting rules needs to know of each rule, without importing its module.

A run selects among all rules by name, code and the ``select``/``ignore`` settings, and a
warm check takes most findings from the results cache: importing 34 modules (and what they
import) only to read six class attributes is most of its start-up. This table holds those
attributes; :func:`vaultkit.lint.rules.rule_refs` imports a rule's module when the rule is
first run. tests/test_results_cache.py holds the table to the rules' classes (and prints
the table to paste when a rule is added or changed); a module missing from it makes every
module be imported, as before.
"""

# code, name, module, severity, fixable, scope, cacheable
RULES = (
    ("VK001", "file-unreadable", "file_unreadable", "error", False, "vault", True),
    ("VK002", "frontmatter-invalid", "frontmatter_invalid", "error", False, "note", True),
    ("VK003", "nul-byte", "nul_byte", "warning", False, "note", True),
    ("VK101", "unknown-location", "unknown_location", "warning", False, "note", True),
    ("VK102", "journal-filename", "journal_filename", "error", False, "note", True),
    ("VK103", "lesson-by-date", "lesson_by_date", "warning", False, "note", True),
    ("VK201", "frontmatter-missing", "frontmatter_missing", "warning", True, "note", True),
    ("VK202", "frontmatter-schema", "frontmatter_schema", "error", False, "note", True),
    ("VK203", "type-mismatch", "type_mismatch", "error", False, "note", True),
    ("VK204", "missing-section", "missing_section", "warning", False, "note", True),
    ("VK205", "deprecated-property", "deprecated_property", "warning", True, "note", True),
    ("VK206", "property-link-unquoted", "property_link_unquoted", "error", True, "note", True),
    ("VK301", "memory-size", "memory_size", "error", False, "note", True),
    ("VK302", "bootstrap-budget", "bootstrap_budget", "warning", False, "vault", True),
    ("VK303", "bootstrap-truncation", "bootstrap_truncation", "error", False, "vault", True),
    ("VK304", "entry-too-long", "entry_too_long", "warning", False, "note", True),
    ("VK305", "entry-too-short", "entry_too_short", "warning", False, "note", True),
    ("VK306", "import-problem", "import_problem", "warning", False, "vault", True),
    ("VK307", "agents-md-shadowed", "agents_md_shadowed", "warning", False, "vault", True),
    ("VK308", "auto-memory-cut", "auto_memory_cut", "error", False, "vault", True),
    ("VK309", "skill-not-loaded", "skill_not_loaded", "error", False, "vault", True),
    ("VK310", "skill-frontmatter", "skill_frontmatter", "warning", False, "note", True),
    ("VK311", "skill-shadows-bundled", "skill_shadows_bundled", "warning", False, "note", True),
    ("VK312", "promotion-over-limit", "promotion_over_limit", "warning", False, "vault", True),
    ("VK401", "lesson-in-now", "lesson_in_now", "warning", False, "note", True),
    ("VK402", "daily-record-in-memory", "daily_record_in_memory", "warning", False, "note", True),
    ("VK403", "filler-entry", "filler_entry", "warning", False, "note", True),
    ("VK404", "lesson-entry-undated", "lesson_entry_undated", "warning", False, "note", True),
    ("VK405", "duplicate-block", "duplicate_block", "warning", False, "note", True),
    ("VK406", "promoted-junk", "promoted_junk", "warning", False, "note", True),
    ("VK407", "promoted-twice", "promoted_twice", "warning", False, "note", True),
    ("VK408", "dream-corpus-indexed", "dream_corpus_indexed", "warning", False, "vault", True),
    ("VK501", "broken-link", "broken_link", "warning", False, "note", True),
    ("VK502", "ambiguous-link", "ambiguous_link", "warning", False, "note", True),
    ("VK503", "orphan-note", "orphan_note", "warning", False, "note", True),
    ("VK504", "index-stale", "index_stale", "error", True, "vault", True),
    ("VK601", "journal-append-only", "journal_append_only", "error", False, "vault", False),
    ("VK602", "mass-deletion", "mass_deletion", "error", False, "vault", False),
    ("VK603", "memory-churn", "memory_churn", "warning", False, "vault", False),
    ("VK701", "secret-in-memory", "secret_in_memory", "error", False, "note", True),
)

# Rules a run without `select` leaves out (``Rule.default`` False): selected by name, code,
# prefix or ALL only.
OFF_BY_DEFAULT = frozenset({"entry-too-short", "orphan-note"})
