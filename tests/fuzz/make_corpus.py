"""Write the fuzz corpus: ``python -m tests.fuzz.make_corpus`` (deterministic; the files are committed).

``corpus/models/`` holds model files (YAML, JSON), ``corpus/urdf/`` URDF files, and ``corpus/manifest.json``
every entry the harness runs: the command line after ``robodyn``, how its working directory is set up
(corpus files copied in, special files such as FIFOs and symlink loops made at run time), and what is
expected (see :mod:`tests.fuzz.harness`). Nothing here is random: rerunning rewrites the same bytes.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"

LINK = {"joint": "R", "a": 0.5, "alpha": 0, "d": 0, "theta": 0, "mass": 1.0, "com": [0.25, 0, 0],
        "inertia": [0.01, 0.02, 0.02]}
LINK2 = {"joint": "R", "a": 0.4, "alpha": 0, "d": 0, "theta": 0, "mass": 0.8, "com": [0.2, 0, 0],
         "inertia": [0.01, 0.015, 0.015]}
GRAVITY = [0, -9.81, 0]

OK_ONE = f"name: one_link\ngravity: {GRAVITY}\nlinks:\n  - {json.dumps(LINK)}\n"
OK_TWO = f"name: two_link\ngravity: {GRAVITY}\nlinks:\n  - {json.dumps(LINK)}\n  - {json.dumps(LINK2)}\n"
OK_SYMBOLIC = "name: sym_link\ngravity: [0, -g, 0]\nlinks:\n  - {joint: R, a: l1, mass: m1, com: [c1, 0, 0]}\n"

#: Commands a refused model is tried with, in turn: the refusal must come before any output is written.
REFUSING_COMMANDS: list[list[str]] = [
    ["show", "{f}"],
    ["derive", "{f}", "-o", "eq.txt"],
    ["codegen", "{f}", "-o", "gen"],
    ["simulate", "{f}", "--t-end", "0.1", "--csv", "run.csv"],
    ["count", "{f}"],
    ["linearize", "{f}"],
    ["check", "{f}", "--samples", "2"],
    ["torques", "{f}", "--csv", "tau.csv"],
]

entries: list[dict[str, Any]] = []
written: dict[str, bytes] = {}


def write(rel: str, content: str | bytes) -> str:
    data = content.encode("utf-8") if isinstance(content, str) else content
    assert rel not in written, rel
    written[rel] = data
    return rel


def add(entry_id: str, args: list[str], expect: str, *, mentions: tuple[str, ...] = (), copy: tuple = (),
        timeout: float | None = None, cost: float = 0.3, **extra: Any) -> None:
    assert entry_id not in {e["id"] for e in entries}, entry_id
    assert expect in ("refuse", "ok", "either")
    entry: dict[str, Any] = {"id": entry_id, "args": args, "expect": expect, "mentions": list(mentions),
                             "setup": {"copy": [list(c) for c in copy]} if copy else {}, "cost": cost}
    entry["timeout"] = timeout if timeout is not None else (10 if expect == "refuse" else 30)
    for key, value in extra.items():
        if key in ("fifo", "symlink", "mkdir", "write", "chmod", "sparse", "repeat", "run"):
            entry["setup"][key] = value
        else:
            entry[key] = value
    entries.append(entry)


_counter = {"n": 0}


def model(name: str, content: str | bytes | Any, expect: str = "refuse", *, mentions: tuple[str, ...] = (),
          ext: str = "yaml", command: list[str] | None = None, **extra: Any) -> None:
    """A model file entry: ``content`` text/bytes (written as is) or data (dumped as JSON)."""
    if not isinstance(content, (str, bytes)):
        content = json.dumps(content, allow_nan=True)
        ext = "json"
    filename = f"{name}.{ext}"
    rel = write(f"models/{filename}", content)
    if command is None:
        if expect == "refuse":
            command = REFUSING_COMMANDS[_counter["n"] % len(REFUSING_COMMANDS)]
            _counter["n"] += 1
        else:
            command = ["show", "{f}"]
    args = [a.replace("{f}", filename) for a in command]
    file_mentions = (filename,) if expect != "ok" else ()
    add(f"models/{name}", args, expect, mentions=(*file_mentions, *mentions), copy=((rel, filename),), **extra)


def urdf(name: str, content: str | bytes, expect: str = "refuse", *, mentions: tuple[str, ...] = (),
         command: list[str] | None = None, **extra: Any) -> None:
    filename = f"{name}.urdf"
    rel = write(f"urdf/{filename}", content)
    args = [a.replace("{f}", filename) for a in (command or ["show", "{f}"])]
    file_mentions = (filename,) if expect != "ok" else ()
    add(f"urdf/{name}", args, expect, mentions=(*file_mentions, *mentions), copy=((rel, filename),), **extra)


def yaml_link(**fields: Any) -> str:
    """A one-link model whose link has ``fields`` replaced (values are YAML text)."""
    row = {k: json.dumps(v) for k, v in LINK.items()}
    row.update(fields)
    body = ", ".join(f"{k}: {v}" for k, v in row.items())
    return f"name: fuzz\nlinks:\n  - {{{body}}}\n"


# -- YAML bombs ------------------------------------------------------------------------------------------------
laughs = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
for k in range(1, 10):
    laughs.append(f"a{k}: &a{k} [" + ",".join([f"*a{k - 1}"] * 9) + "]")
model("bomb_billion_laughs", "\n".join(laughs) + "\nname: *a9\nlinks: [{joint: R, mass: 1}]\n")
model("bomb_alias_once", "links:\n  - {joint: R, mass: &m 1.0}\n  - {joint: R, mass: *m}\n")
model("bomb_merge_key", "base: &b {joint: R, mass: 1}\nlinks:\n  - {<<: *b}\n")
model("bomb_alias_links", "x: &l [{joint: R, mass: 1}]\nlinks: *l\n")
model("bomb_deep_flow_lists", "links: " + "[" * 5000 + "]" * 5000 + "\n")
model("bomb_deep_block_maps", "".join("  " * k + "a:\n" for k in range(600)) + "  " * 600 + "b: 1\n")
model("bomb_deep_com", yaml_link(com="[" * 300 + "0" + "]" * 300), mentions=("com",))
model("bomb_deep_json", "[" * 20000 + "]" * 20000, ext="json")
model("bomb_deep_json_objects", '{"a":' * 5000 + "1" + "}" * 5000, ext="json")
model("bomb_long_expression", yaml_link(a=json.dumps("+".join(["l1"] * 30000))), mentions=("'a'",))
model("bomb_int_5000_digits", yaml_link(mass="9" * 5000))  # refused by the YAML reader: no field known
model("bomb_int_100k_digits", yaml_link(mass="1" + "0" * 100000))
model("bomb_int_400_digits", yaml_link(mass="7" * 400), mentions=("mass",))
model("bomb_int_json_10k_digits", '{"links": [{"joint": "R", "mass": ' + "3" * 10000 + "}]}", ext="json")
model("bomb_string_int_400_digits", yaml_link(d=json.dumps("1" * 400)), mentions=("'d'",))
model("bomb_many_keys", "\n".join(f"k{i}: {i}" for i in range(3000)) + "\n" + OK_ONE)
model("bomb_many_links_201", "links:\n" + "".join(f"  - {json.dumps(LINK)}\n" for _ in range(201)),
      mentions=("links",))
model("bomb_many_links_5000", "links:\n" + "  - {joint: R}\n" * 5000, mentions=("links",))
model("bomb_wide_com_list", yaml_link(com=json.dumps([0] * 10000)), mentions=("com",))
model("bomb_exponent_tower", yaml_link(a=json.dumps("2**2**2**2**2**2")), mentions=("'a'",))
model("bomb_power_nest", yaml_link(a=json.dumps("((((l1**9)**9)**9)**9)**9")), mentions=("'a'",), expect="either")
model("bomb_factorial_like", yaml_link(a=json.dumps("*".join(["(l1+1)"] * 300))), expect="either",
      mentions=("'a'",))
model("bomb_paren_nest", yaml_link(a=json.dumps("(" * 190 + "1" + ")" * 190)), expect="ok")  # parentheses make no node
model("bomb_unary_nest", yaml_link(a=json.dumps("-" * 1900 + "1")), mentions=("'a'",))
model("bomb_huge_float_digits", yaml_link(a=json.dumps("0." + "1" * 1990)), expect="either", mentions=("'a'",))

# -- YAML tags ---------------------------------------------------------------------------------------------------
tags = {
    "tag_python_object_apply": "!!python/object/apply:os.system ['touch pwned']",
    "tag_python_object_new": "!!python/object/new:subprocess.Popen [['touch', 'pwned']]",
    "tag_python_object": "!!python/object:collections.OrderedDict {}",
    "tag_python_name": "!!python/name:os.system",
    "tag_python_module": "!!python/module:os",
    "tag_python_tuple": "!!python/tuple [0, 0, 0]",
    "tag_verbatim_python": "!<tag:yaml.org,2002:python/object/apply:os.system> ['touch pwned']",
    "tag_custom": "!robot 1.0",
    "tag_custom_local": "!!robodyn 1.0",
}
for name, value in tags.items():
    model(name, yaml_link(mass=value))
model("tag_directive_python", "%TAG !py! tag:yaml.org,2002:python/\n---\n"
      "links: [{joint: R, mass: !py!object/apply:os.system ['touch pwned']}]\n")
model("tag_binary_mass", yaml_link(mass="!!binary aGVsbG8="), mentions=("mass",))
model("tag_set_com", yaml_link(com="!!set {a, b, c}"), mentions=("com",))
model("tag_omap_links", "links: !!omap [{a: 1}, {b: 2}]\n", mentions=("links",))
model("tag_pairs_link", "links: [!!pairs [[joint, R], [mass, 1]]]\n")
model("tag_timestamp_mass", yaml_link(mass="2001-12-14"), mentions=("mass",))
model("tag_timestamp_key", "2001-12-14: 1\n" + OK_ONE)
model("tag_int_key", "1: 2\n" + OK_ONE)
model("tag_null_key", "~: 2\n" + OK_ONE)
model("tag_bool_key_link", "links: [{joint: R, true: 1}]\n", mentions=("link 1",))
model("tag_str_mass", yaml_link(mass="!!str 1.5"), expect="ok")
model("tag_float_nan", yaml_link(mass="!!float .nan"), mentions=("mass",))
model("tag_int_hex_mass", yaml_link(mass="0x1F"), expect="ok")
model("tag_sexagesimal", yaml_link(a="1:30"), expect="either", mentions=("'a'",))

# -- duplicate keys ----------------------------------------------------------------------------------------------
model("dup_top_name", "name: first\nname: second\n" + OK_ONE.split("\n", 1)[1], mentions=("name",))
model("dup_top_links", OK_ONE + f"links:\n  - {json.dumps(LINK2)}\n", mentions=("links",))
model("dup_link_mass", "links:\n  - {joint: R, mass: 1, mass: 100}\n", mentions=("mass",))
model("dup_link_joint_block", "links:\n  - joint: R\n    a: 1\n    joint: P\n", mentions=("joint",))
model("dup_quoted_key", "links:\n  - {joint: R, mass: 1, \"mass\": 2}\n", mentions=("mass",))
model("dup_nested_tip_load", OK_ONE + "tip_load: {force: [0, 0, 1], force: [0, 0, 2]}\n", mentions=("force",))
model("dup_payload_mass", OK_ONE + "payload: {mass: 1, mass: -1}\n", mentions=("mass",))
model("dup_json_mass", '{"links": [{"joint": "R", "mass": 1, "mass": 2}]}', ext="json", mentions=("mass",))
model("dup_json_top", '{"name": "a", "name": "b", "links": [{"joint": "R"}]}', ext="json", mentions=("name",))

# -- wrong types and shapes --------------------------------------------------------------------------------------
model("shape_links_string", "links: R R\n", mentions=("links",))
model("shape_links_mapping", "links: {joint: R}\n", mentions=("links",))
model("shape_links_empty", "links: []\n", mentions=("links",))
model("shape_links_missing", "name: nolinks\n", mentions=("links",))
model("shape_links_null", "links:\n", mentions=("links",))
model("shape_document_list", "- joint: R\n", mentions=())
model("shape_document_scalar", "42\n")
model("shape_document_string", "just some text\n")
model("shape_empty_file", "")
model("shape_only_comment", "# nothing here\n")
model("shape_multi_document", OK_ONE + "---\n" + OK_TWO)
model("shape_link_string", "links: [R]\n", mentions=("link 1",))
model("shape_link_null", "links: [~]\n", mentions=("link 1",))
model("shape_link_list", "links: [[R, 1, 0]]\n", mentions=("link 1",))
model("shape_joint_missing", "links: [{mass: 1}]\n", mentions=("joint",))
model("shape_joint_int", "links: [{joint: 1}]\n", mentions=("joint",))
model("shape_joint_list", "links: [{joint: [R]}]\n", mentions=("joint",))
model("shape_joint_spherical", "links: [{joint: S}]\n", mentions=("joint",))
model("shape_inertia_3x2", yaml_link(inertia="[[1, 0], [0, 1], [0, 0]]"), mentions=("inertia",))
model("shape_inertia_2", yaml_link(inertia="[1, 1]"), mentions=("inertia",))
model("shape_inertia_6", yaml_link(inertia="[1, 1, 1, 0, 0, 0]"), mentions=("inertia",))
model("shape_inertia_string", yaml_link(inertia="diag"), mentions=("inertia",))
model("shape_inertia_ragged", yaml_link(inertia="[[1], [0, 1], [0, 0, 1]]"), mentions=("inertia",))
model("shape_inertia_3x3x3", yaml_link(inertia=json.dumps([[[1, 0, 0]] * 3] * 3)), mentions=("inertia",))
model("shape_inertia_mapping", yaml_link(inertia="{xx: 1, yy: 1, zz: 1}"), mentions=("inertia",))
model("shape_com_5", yaml_link(com="[0, 0, 0, 0, 0]"), mentions=("com",))
model("shape_com_2", yaml_link(com="[0, 0]"), mentions=("com",))
model("shape_com_string", yaml_link(com="0 0 0"), mentions=("com",))
model("shape_com_mapping", yaml_link(com="{x: 0, y: 0, z: 0}"), mentions=("com",))
model("shape_com_scalar", yaml_link(com="0"), mentions=("com",))
model("shape_com_nested", yaml_link(com="[[0, 0, 0]]"), mentions=("com",))
model("shape_gravity_2", OK_ONE + "gravity: [0, -9.81]\n".replace("gravity", "gravity"), mentions=("gravity",))
model("shape_gravity_string", "gravity: down\nlinks:\n  - " + json.dumps(LINK) + "\n", mentions=("gravity",))
model("shape_gravity_matrix", "gravity: [[0, 0, -9.81]]\nlinks:\n  - " + json.dumps(LINK) + "\n",
      mentions=("gravity",))
model("shape_tool_3x3", OK_ONE + "tool: [[1, 0, 0], [0, 1, 0], [0, 0, 1]]\n", mentions=("tool",))
model("shape_tool_last_row", OK_ONE + "tool: [[1,0,0,0],[0,1,0,0],[0,0,1,0],[1,1,1,1]]\n", mentions=("tool",))
model("shape_placement_not_rotation", yaml_link(placement="[[2,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]]"),
      mentions=("placement",))
model("shape_placement_4x3", yaml_link(placement="[[1,0,0],[0,1,0],[0,0,1],[0,0,0]]"), mentions=("placement",))
model("shape_placement_reflection", yaml_link(placement="[[-1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]]"),
      mentions=("placement",))
model("shape_mass_list", yaml_link(mass="[1]"), mentions=("mass",))
model("shape_mass_mapping", yaml_link(mass="{value: 1}"), mentions=("mass",))
model("shape_mass_bool", yaml_link(mass="true"), mentions=("mass",))
model("shape_mass_null", yaml_link(mass="null"), mentions=("mass",))
model("shape_mass_empty_string", yaml_link(mass='""'), mentions=("mass",))
model("shape_convention_int", "convention: 5\nlinks:\n  - " + json.dumps(LINK) + "\n", mentions=("convention",))
model("shape_convention_list", "convention: [standard]\nlinks:\n  - " + json.dumps(LINK) + "\n",
      mentions=("convention",))
model("shape_convention_unknown", "convention: hartenberg\nlinks:\n  - " + json.dumps(LINK) + "\n",
      mentions=("convention",))
model("shape_tip_load_2", OK_ONE + "tip_load: {force: [0, 1]}\n", mentions=("tip_load",))
model("shape_tip_load_string", OK_ONE + "tip_load: heavy\n", mentions=("tip_load",))
model("shape_tip_load_unknown", OK_ONE + "tip_load: {torque: [0, 0, 1]}\n", mentions=("torque",))
model("shape_payload_list", OK_ONE + "payload: [1, 2]\n", mentions=("payload",))
model("shape_payload_unknown", OK_ONE + "payload: {massive: 1}\n", mentions=("massive",))
model("shape_unknown_top", OK_ONE + "linkz: []\n", mentions=("linkz",))
model("shape_unknown_link_key", yaml_link(mas="1"), mentions=("mas",))
model("shape_angeles_with_d", "convention: angeles\nlinks: [{joint: R, d: 1}]\n", mentions=("'d'",))
model("shape_link_int_key", "links: [{joint: R, 1: 2}]\n", mentions=("link 1",))
model("shape_name_list", "name: [1, 2]\n" + OK_ONE.split("\n", 1)[1], expect="either", mentions=("name",))
model("shape_name_mapping", "name: {a: 1}\n" + OK_ONE.split("\n", 1)[1], expect="either", mentions=("name",))
model("shape_description_mapping", OK_ONE + "description: {a: [1, 2]}\n", expect="either",
      mentions=("description",))
model("shape_json_array", [LINK], mentions=())
model("shape_json_links_number", {"links": 3}, mentions=("links",))
model("shape_yaml_in_json", OK_ONE, ext="json")
model("shape_json_in_yaml", json.dumps({"name": "j", "gravity": GRAVITY, "links": [LINK]}), expect="ok")
model("shape_tabs_indent", "links:\n\t- {joint: R}\n")
model("shape_bom_yaml", "\ufeff" + OK_ONE, expect="either")

# -- non-finite numbers ------------------------------------------------------------------------------------------
nonfinite = {
    "nan_mass": ("mass", ".nan"), "nan_mass_caps": ("mass", ".NaN"), "inf_mass": ("mass", ".inf"),
    "neg_inf_d": ("d", "-.inf"), "overflow_a": ("a", "1e999"), "overflow_neg_a": ("a", "-1e999"),
    "string_nan_alpha": ("alpha", '"nan"'), "string_inf_d": ("d", '"inf"'), "string_neg_inf_theta": ("theta", '"-inf"'),
    "string_infinity": ("a", '"Infinity"'), "string_1e999": ("a", '"1e999"'), "expr_div_zero": ("a", '"1/0"'),
    "expr_zero_neg_power": ("a", '"0**-1"'), "expr_float_zero_neg_power": ("a", '"0.0**-1"'),
    "expr_sym_div_zero": ("a", '"l1/(l2-l2)"'), "expr_huge_exponent": ("a", '"2**1000"'),
    "expr_float_overflow": ("mass", '"1e308*10"'), "expr_sqrt_negative": ("a", '"sqrt(-1)"'),
    "expr_cos_nan": ("alpha", '"cos(nan)"'),
    "expr_pow_float_overflow": ("a", '"10.0**64*10.0**64*10.0**64*10.0**64*10.0**64"'),
    "expr_complex_root": ("a", '"(-8)**(1/3)"'), "expr_exp_call": ("a", '"exp(1000)"'),
    "expr_int_power_digits": ("a", '"9**64*9**64*9**64*9**64*9**64*9**64"'),
    "nan_damping": ("damping", ".nan"), "inf_armature": ("armature", ".inf"),
    "nan_com": ("com", "[.nan, 0, 0]"), "inf_inertia": ("inertia", "[.inf, 1, 1]"),
    "nan_inertia_matrix": ("inertia", "[[1, 0, 0], [0, .nan, 0], [0, 0, 1]]"),
    "nan_placement": ("placement", "[[1,0,0,.nan],[0,1,0,0],[0,0,1,0],[0,0,0,1]]"),
}
for name, (field, value) in nonfinite.items():
    model(name, yaml_link(**{field: value}), mentions=(field,))
model("nan_gravity", OK_ONE + "gravity: [0, 0, .nan]\n".replace("gravity:", "gravity:"), mentions=("gravity",))
model("nan_tool", OK_ONE + "tool: [[1,0,0,0],[0,1,0,0],[0,0,1,.inf],[0,0,0,1]]\n", mentions=("tool",))
model("nan_tip_force", OK_ONE + "tip_load: {force: [0, .nan, 0]}\n", mentions=("force",))
model("nan_payload_mass", OK_ONE + "payload: {mass: .nan}\n", mentions=("payload",))
model("nan_json_literal", '{"links": [{"joint": "R", "mass": NaN}]}', ext="json", mentions=("mass",))
model("inf_json_literal", '{"links": [{"joint": "R", "a": Infinity}]}', ext="json", mentions=("'a'",))
model("neg_inf_json_literal", '{"links": [{"joint": "R", "d": -Infinity}]}', ext="json", mentions=("'d'",))
model("overflow_json_literal", '{"links": [{"joint": "R", "a": 1e999}]}', ext="json", mentions=("'a'",))
model("subnormal_mass", yaml_link(mass="5e-324"), expect="ok")
model("expr_sin_huge", yaml_link(a='"sin(1e308*1e308)"'), expect="either", mentions=("'a'",))

# -- expression injection ----------------------------------------------------------------------------------------
injections = [
    "__import__('os').system('touch pwned')", "lambda: 0", "().__class__.__bases__[0].__subclasses__()",
    "l1.__class__", "f'{l1}'", "eval('1')", "exec('import os')", "open('/etc/passwd').read()", "[1, 2]",
    "{1: 2}", "1 if l1 else 0", "(x := 1)", "l1[0]", "l1.real", "sympify('1')", "Symbol('x')", "S(1)",
    "Integer(1)", "1; import os", "l1 and l2", "l1 < l2", "not l1", "~l1", "l1 @ l2", "l1 // l2", "l1 % l2",
    "l1 ^ l2", "sin(x=1)", "sin(1, 2)", "sqrt", "q1", "qd2", "qdd3", "_private", "__builtins__", "\u0430",
    "'string'", "b'bytes'", "1j", "...", "None", "True", "getattr(l1, 'x')", "globals()", "sin(*l1)",
    "[x for x in ()]", "sin.__call__(1)", "1 + (yield)", "\\u0061", "l1\nimport os",
]
fields = ["a", "alpha", "d", "theta", "mass", "damping", "armature"]
for k, text in enumerate(injections):
    field = fields[k % len(fields)]
    model(f"inject_{k:02d}", yaml_link(**{field: json.dumps(text)}), mentions=(f"'{field}'",))
model("inject_com_entry", yaml_link(com=json.dumps([0, "__import__('os').getcwd()", 0])), mentions=("com",))
model("inject_inertia_entry", yaml_link(inertia=json.dumps(["1", "eval('1')", "1"])), mentions=("inertia",))
model("inject_gravity", "gravity: [0, 0, \"__import__('sys').exit(0)\"]\nlinks: [{joint: R}]\n",
      mentions=("gravity",))
model("inject_angeles_b", "convention: angeles\nlinks: [{joint: P, b: \"1) + __import__('os').getpid() + (1\"}]\n",
      mentions=("link 1",))
model("inject_json", {"links": [{"joint": "R", "a": "__import__('os')"}]}, mentions=("'a'",))

# -- hostile names and descriptions --------------------------------------------------------------------------
hostile = {
    "quotes": "a\"b'c", "triple_quotes": "'''\"\"\"", "c_comment_end": "x */ int pwned; /*",
    "c_comment_start": "/* open", "html_comment": "--> <!-- <script>alert(1)</script>", "rich_close": "a[/]b",
    "rich_tag": "[bold red]loud[/bold red] [link=file:///etc/passwd]x[/link]", "newline": "first\nsecond",
    "carriage_return": "fake\rerror: spoofed", "nul": "a\u0000b", "bidi": "abc\u202edcba\u202c",
    "ansi": "\u001b[31mred",
    "long_10k": "n" * 10000, "path_traversal": "../../escape", "empty": "", "space": " ", "shell": "$(touch pwned)`id`",
    "format_string": "%s%n{0}{robot}", "backslashes": "\\\\server\\share\\", "latex": "\\input{/etc/passwd}$x$",
    "fortran_bang": "! end module", "python_code": "\"\"\"\nimport os\nos.system('touch pwned')\n\"\"\"",
    "emoji": "\U0001f916 robot", "zero_width": "a\u200bb",
}
for key, text in hostile.items():
    encoded = json.dumps(text)
    model(f"name_{key}", f"name: {encoded}\n" + OK_ONE.split("\n", 1)[1], expect="either", mentions=("name",),
          command=["show", "{f}"])
    model(f"description_{key}", OK_ONE + f"description: {encoded}\nsource: {encoded}\n", expect="ok",
          command=["show", "{f}"])
for lang, check in (("c", "c"), ("numpy", "python"), ("fortran", "fortran")):
    for key in ("c_comment_end", "python_code", "newline"):
        text = json.dumps(hostile[key])
        model(f"codegen_{lang}_name_{key}", f"name: {text}\n" + OK_ONE.split("\n", 1)[1], expect="either",
              command=["codegen", "{f}", "--lang", lang, "--outputs", "tau", "-o", "gen"], mentions=("name",),
              outputs=["gen"], checks=[check], cost=1.0)
        model(f"codegen_{lang}_description_{key}", OK_ONE + f"description: {text}\nsource: {text}\n",
              expect="ok", command=["codegen", "{f}", "--lang", lang, "--outputs", "tau", "-o", "gen"],
              outputs=["gen"], checks=[check], cost=1.0)
model("derive_latex_hostile_name", "name: " + json.dumps(hostile["latex"]) + "\n" + OK_ONE.split("\n", 1)[1],
      expect="either", command=["derive", "{f}", "-f", "latex"], mentions=("name",), cost=1.0)
model("derive_json_hostile_name", "name: " + json.dumps(hostile["html_comment"]) + "\n" + OK_ONE.split("\n", 1)[1],
      expect="either", command=["derive", "{f}", "-f", "json", "-o", "eq.json"], mentions=("name",),
      outputs=["eq.json"], cost=1.0)
model("raw_nul_byte", b"name: a\x00b\n" + OK_ONE.split("\n", 1)[1].encode())
model("raw_latin1", "name: caf\u00e9\n".encode("latin-1") + OK_ONE.split("\n", 1)[1].encode())
model("raw_binary_garbage", bytes(range(256)) * 8)
model("raw_utf16", OK_ONE.encode("utf-16"), expect="either")
model("raw_control_chars", "name: a\x07\x1bb\n" + OK_ONE.split("\n", 1)[1])

# -- physically doubtful -----------------------------------------------------------------------------------------
model("phys_negative_mass", yaml_link(mass="-1"), mentions=("mass",))
model("phys_negative_mass_expr", yaml_link(mass='"-2*3"'), mentions=("mass",))
model("phys_negative_moment", yaml_link(inertia="[-1, 1, 1]"), mentions=("inertia",))
model("phys_asymmetric_inertia", yaml_link(inertia="[[1, 0.5, 0], [0, 1, 0], [0, 0, 1]]"), mentions=("inertia",))
model("phys_triangle_strict", yaml_link(inertia="[0.01, 0.01, 0.05]"), mentions=("inertia", "link 1"),
      command=["show", "{f}", "--strict"])
model("phys_triangle_warns", yaml_link(inertia="[0.01, 0.01, 0.05]"), expect="ok")
model("phys_inertia_noise", yaml_link(inertia="[[0.02, 1.0e-17, 0], [0, 0.02, 0], [0, 0, 0.01]]"), expect="ok")
model("phys_inertia_noise_negative", yaml_link(inertia="[[0.02, 0, 0], [0, 0.02, 0], [0, 0, -1.0e-18]]"),
      expect="either", mentions=("inertia",))
model("phys_negative_damping", yaml_link(damping="-0.5"), mentions=("damping",))
model("phys_negative_armature", yaml_link(armature="-0.1"), mentions=("armature",))
model("phys_payload_negative", OK_ONE + "payload: {mass: -3}\n", mentions=("payload",))
model("phys_huge_mass", yaml_link(mass="1.0e300", inertia="[1.0e300, 1.0e300, 1.0e300]"), expect="either",
      mentions=("mass",))
model("phys_massless_show", yaml_link(mass="0", inertia="[0, 0, 0]"), expect="ok")
model("phys_indefinite_matrix", yaml_link(inertia="[[1, 2, 0], [2, 1, 0], [0, 0, 1]]"), mentions=("inertia",))

# -- valid models (used by the argument entries too) ---------------------------------------------------------
model("ok_one_link", OK_ONE, expect="ok")
model("ok_two_link", OK_TWO, expect="ok", command=["derive", "{f}", "-o", "eq.txt"], outputs=["eq.txt"], cost=1.0)
model("ok_symbolic", OK_SYMBOLIC, expect="ok")
model("ok_two_link_json", {"name": "two_json", "gravity": GRAVITY, "links": [LINK, LINK2]}, expect="ok",
      command=["codegen", "{f}", "--lang", "numpy", "-o", "gen"], outputs=["gen"], checks=["python"], cost=1.5)
model("ok_200_links", "links:\n" + "".join(f"  - {json.dumps(LINK)}\n" for _ in range(200)), expect="ok", cost=3)

# -- URDF ----------------------------------------------------------------------------------------------------
INERTIAL = ('<inertial><origin xyz="0.1 0 0" rpy="0 0 0"/><mass value="1"/>'
            '<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.02"/></inertial>')


def robot(body: str, name: str = "fuzz", head: str = "") -> str:
    return f'<?xml version="1.0"?>\n{head}<robot name="{name}">\n{body}\n</robot>\n'


def link(name: str, inertial: str = INERTIAL) -> str:
    return f'<link name="{name}">{inertial}</link>'


def joint(name: str, parent: str, child: str, kind: str = "revolute", origin: str = 'xyz="0 0 0.5" rpy="0 0 0"',
          axis: str = 'xyz="0 0 1"', extra: str = "") -> str:
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin {origin}/><axis {axis}/>{extra}</joint>')


def chain(n: int, **joint_args: Any) -> str:
    parts = [link("base", "")]
    for k in range(1, n + 1):
        parts.append(link(f"l{k}"))
        parts.append(joint(f"j{k}", "base" if k == 1 else f"l{k - 1}", f"l{k}", **joint_args))
    return "\n".join(parts)


urdf("ok_one_joint", robot(chain(1)), expect="ok")
urdf("ok_two_joints_fixed", robot(chain(2) + "\n" + link("tool", "") + joint("tj", "l2", "tool", "fixed")),
     expect="ok", command=["derive", "{f}", "-o", "eq.txt"], outputs=["eq.txt"], cost=1.0)
urdf("ok_continuous", robot(chain(1, kind="continuous")), expect="ok")
urdf("ok_mesh_references", robot(chain(1).replace(
    "</link>", '<visual><geometry><mesh filename="file:///etc/passwd"/></geometry></visual>'
    '<collision><geometry><mesh filename="http://127.0.0.1:9/x.stl"/></geometry></collision></link>')),
    expect="ok", checks=["absent:root:x:0"])
urdf("ok_gazebo_extras", robot(chain(1) + '\n<gazebo reference="l1"><material>Gazebo/Red</material></gazebo>'
                               '\n<transmission name="t"><type>x</type></transmission>'), expect="ok")
urdf("xxe_file", robot(link("base", "") + '\n<link name="&x;"/>',
                       head='<!DOCTYPE robot [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n'),
     checks=["absent:root:x:0"])
urdf("xxe_parameter_entity", robot(chain(1), head='<!DOCTYPE robot [<!ENTITY % p SYSTEM "file:///etc/passwd"> %p;]>\n'))
urdf("xxe_external_dtd", robot(chain(1), head='<!DOCTYPE robot SYSTEM "http://127.0.0.1:9/evil.dtd">\n'))
urdf("xxe_billion_laughs", robot(link("base", "") + '\n<link name="&l9;"/>', head="<!DOCTYPE robot [\n"
     + '<!ENTITY l0 "lol">\n' + "".join(f'<!ENTITY l{k} "{("&l" + str(k - 1) + ";") * 10}">\n'
                                         for k in range(1, 10)) + "]>\n"))
urdf("xxe_quadratic_blowup", robot(chain(1).replace('name="l1"', 'name="&a;&a;&a;&a;&a;&a;&a;&a;"', 1),
                                   head=f'<!DOCTYPE robot [<!ENTITY a "{"x" * 50000}">]>\n'))
urdf("dtd_internal_only", robot(chain(1), head="<!DOCTYPE robot>\n"))
urdf("xinclude_passwd", robot(chain(1) + '\n<xi:include xmlns:xi="http://www.w3.org/2001/XInclude" '
                              'href="/etc/passwd" parse="text"/>'), expect="either", checks=["absent:root:x:0"])
urdf("processing_instruction", robot(chain(1), head='<?xml-stylesheet href="file:///etc/passwd"?>\n'),
     expect="either")
urdf("undefined_entity", robot(chain(1).replace('name="l1"', 'name="&undefined;"', 1)))
urdf("char_ref_nul", robot(chain(1), name="a&#0;b"))
urdf("robot_no_name", robot(chain(1)).replace(' name="fuzz"', ""))
urdf("link_no_name", robot(chain(1) + "\n<link/>"))
urdf("joint_no_name", robot(chain(1) + '\n<joint type="fixed"><parent link="l1"/><child link="base"/></joint>'))
urdf("joint_no_parent", robot(link("base", "") + link("l1") + '<joint name="j" type="revolute"><child link="l1"/>'
                              "</joint>"), mentions=("joint 'j'",))
urdf("joint_no_child", robot(link("base", "") + link("l1") + '<joint name="j" type="revolute"><parent link="base"/>'
                             "</joint>"), mentions=("joint 'j'",))
urdf("joint_no_type", robot(chain(1).replace(' type="revolute"', "")), mentions=("j1",))
urdf("joint_unknown_type", robot(chain(1, kind="spherical")), mentions=("j1",))
urdf("joint_floating", robot(chain(1, kind="floating")), mentions=("j1",))
urdf("joint_planar", robot(chain(1, kind="planar", axis='xyz="1 0 0"')), mentions=("j1",))  # (axis z reads)
urdf("joint_mimic", robot(chain(2).replace("</joint>", '<mimic joint="j1" multiplier="1"/></joint>', 2)[::1]),
     mentions=("j",))
urdf("joint_self", robot(link("base", "") + link("l1") + joint("j", "l1", "l1")), mentions=("joint 'j'",))
urdf("joint_undefined_link", robot(chain(1) + joint("j9", "l1", "nowhere")), mentions=("j9",))
urdf("cycle_two", robot(link("a") + link("b") + joint("j1", "a", "b") + joint("j2", "b", "a")))
urdf("cycle_three", robot(link("a") + link("b") + link("c") + joint("j1", "a", "b") + joint("j2", "b", "c")
                          + joint("j3", "c", "a")))
urdf("two_parents", robot(chain(2) + joint("j3", "base", "l2")), mentions=("l2",))
urdf("two_roots", robot(chain(1) + link("island") + link("island2") + joint("jx", "island", "island2")))
urdf("branched", robot(chain(2) + link("side") + joint("js", "l1", "side")), expect="ok")  # a tree: loads
urdf("duplicate_link", robot(chain(1) + link("l1")), mentions=("l1",))
urdf("duplicate_joint", robot(chain(2).replace('name="j2"', 'name="j1"')), mentions=("j1",))
urdf("chain_300", robot(chain(300)), mentions=("300",), timeout=20, cost=2)
urdf("no_joints_no_links", robot(""))
urdf("only_fixed", robot(chain(1, kind="fixed")))
for key, attrs in {
    "origin_nan": ('xyz="nan 0 0" rpy="0 0 0"', 'xyz="0 0 1"'), "origin_inf_rpy": ('xyz="0 0 0" rpy="inf 0 0"',
                                                                                 'xyz="0 0 1"'),
    "origin_two_numbers": ('xyz="1 2" rpy="0 0 0"', 'xyz="0 0 1"'), "origin_words": ('xyz="a b c"', 'xyz="0 0 1"'),
    "origin_huge": ('xyz="1e308 1e308 1e308"', 'xyz="0 0 1"'), "origin_overflow": ('xyz="1e999 0 0"', 'xyz="0 0 1"'),
    "axis_zero": ('xyz="0 0 0"', 'xyz="0 0 0"'), "axis_nan": ('xyz="0 0 0"', 'xyz="nan 0 1"'),
    "axis_tiny": ('xyz="0 0 0"', 'xyz="0 0 1e-300"'), "axis_huge": ('xyz="0 0 0"', 'xyz="1e308 1e308 0"'),
    "axis_four": ('xyz="0 0 0"', 'xyz="0 0 1 0"'),
}.items():
    expect = "either" if key in ("axis_tiny", "axis_huge", "origin_huge") else "refuse"
    urdf(key, robot(chain(1, origin=attrs[0], axis=attrs[1])), expect=expect, mentions=("j1",),
         command=["linearize", "{f}"] if expect == "either" else None)
for key, inertial in {
    "mass_nan": INERTIAL.replace('value="1"', 'value="nan"'), "mass_negative": INERTIAL.replace('value="1"',
                                                                                             'value="-1"'),
    "mass_missing": INERTIAL.replace('<mass value="1"/>', ""),
    "mass_word": INERTIAL.replace('value="1"', 'value="one"'),
    "inertia_missing_izz": INERTIAL.replace(' izz="0.02"', ""), "inertia_negative": INERTIAL.replace('ixx="0.01"',
                                                                                                 'ixx="-1"'),
    "inertia_inf": INERTIAL.replace('iyy="0.02"', 'iyy="inf"'), "inertia_huge": INERTIAL.replace(
        'value="1"', 'value="1e308"').replace('xyz="0.1 0 0"', 'xyz="1e10 1e10 1e10"'),
    "inertia_triangle": INERTIAL.replace('izz="0.02"', 'izz="0.5"'), "inertial_origin_nan": INERTIAL.replace(
        'rpy="0 0 0"', 'rpy="0 nan 0"'), "no_inertia": INERTIAL.replace(
        '<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.02"/>', ""),
}.items():
    expect = "either" if key in ("inertia_triangle", "inertia_huge") else "refuse"
    body = link("base", "") + link("l1", inertial) + joint("j1", "base", "l1")
    urdf(key, robot(body), expect=expect, mentions=("l1",))
urdf("dynamics_nan", robot(chain(1, extra='<dynamics damping="nan"/>')), mentions=("j1",))
urdf("dynamics_negative", robot(chain(1, extra='<dynamics damping="-1"/>')), mentions=("j1",))
urdf("dynamics_friction", robot(chain(1, extra='<dynamics damping="0.1" friction="0.2"/>')), expect="ok")
urdf("limit_nan", robot(chain(1, extra='<limit effort="nan" velocity="nan" lower="nan" upper="nan"/>')),
     expect="either", mentions=("j1",))
urdf("wrong_root_robots", "<robots name='x'/>\n")
urdf("wrong_root_html", "<html><body>robot</body></html>\n")
urdf("not_xml", "robot: yes\n")
urdf("empty", "")
urdf("only_declaration", '<?xml version="1.0"?>\n')
urdf("truncated", robot(chain(1))[:-40])
urdf("latin1_undeclared", robot(chain(1)).replace("fuzz", "caf\u00e9").encode("latin-1"))
urdf("latin1_declared", robot(chain(1)).replace('version="1.0"', 'version="1.0" encoding="ISO-8859-1"')
     .replace("fuzz", "caf\u00e9").encode("latin-1"), expect="either")
urdf("binary_garbage", bytes((k * 37 + 11) % 256 for k in range(4096)))
urdf("deep_elements", robot("<a>" * 5000 + "</a>" * 5000))
urdf("many_attributes", robot(chain(1).replace('<link name="l1">', '<link name="l1" '
                                                + " ".join(f'x{k}="{k}"' for k in range(20000)) + ">")),
     expect="either")
urdf("robot_name_markup", robot(chain(1), name="[/][bold]x"), expect="either", mentions=("[/]",))
urdf("robot_name_c_comment", robot(chain(1), name="x */ int pwned; /*"), expect="either",
     command=["codegen", "{f}", "--outputs", "tau", "-o", "gen"], outputs=["gen"], checks=["c"], cost=1.0)
urdf("link_name_newline", robot(chain(1).replace('"l1"', '"l&#10;1"')), expect="either")
urdf("robot_name_long", robot(chain(1), name="r" * 10000), expect="either")


# -- special files, made at run time -------------------------------------------------------------------------
def special(name: str, args: list[str], expect: str = "refuse", *, mentions: tuple[str, ...] = (),
            **setup: Any) -> None:
    add(f"special/{name}", args, expect, mentions=mentions, **setup)


special("fifo_yaml", ["show", "arm.yaml"], mentions=("arm.yaml",), fifo=["arm.yaml"])
special("fifo_json", ["derive", "arm.json", "-o", "eq.txt"], mentions=("arm.json",), fifo=["arm.json"])
special("fifo_urdf", ["show", "arm.urdf"], mentions=("arm.urdf",), fifo=["arm.urdf"])
special("dev_zero", ["show", "/dev/zero"], mentions=("/dev/zero",))
special("dev_zero_link_yaml", ["show", "zero.yaml"], mentions=("zero.yaml",), symlink=[["/dev/zero", "zero.yaml"]])
special("dev_zero_link_urdf", ["show", "zero.urdf"], mentions=("zero.urdf",), symlink=[["/dev/zero", "zero.urdf"]])
special("dev_urandom_link", ["show", "rand.json"], mentions=("rand.json",), symlink=[["/dev/urandom", "rand.json"]])
special("dev_null", ["show", "/dev/null"], mentions=("/dev/null",))
special("dev_null_link_urdf", ["show", "null.urdf"], mentions=("null.urdf",), symlink=[["/dev/null", "null.urdf"]])
special("directory_yaml", ["show", "arm.yaml"], mentions=("arm.yaml",), mkdir=["arm.yaml"])
special("directory_urdf", ["show", "arm.urdf"], mentions=("arm.urdf",), mkdir=["arm.urdf"])
special("directory_plain", ["show", "somedir"], mentions=("somedir",), mkdir=["somedir"])
special("symlink_loop", ["show", "loop.yaml"], mentions=("loop.yaml",), symlink=[["loop.yaml", "loop.yaml"]])
special("symlink_loop_urdf", ["show", "loop.urdf"], mentions=("loop.urdf",), symlink=[["loop.urdf", "loop.urdf"]])
special("symlink_dangling", ["show", "gone.yaml"], mentions=("gone.yaml",), symlink=[["nowhere.yaml", "gone.yaml"]])
special("unreadable_file", ["show", "secret.yaml"], "either", mentions=("secret.yaml",),
        write=[["secret.yaml", OK_ONE]], chmod=[["secret.yaml", 0]])
special("sparse_3gb_yaml", ["show", "big.yaml"], mentions=("big.yaml",), sparse=[["big.yaml", 3 * 2**30]])
special("oversize_yaml_2mb", ["show", "big.yaml"], mentions=("big.yaml",),
        repeat=[["big.yaml", "# padding padding padding padding padding padding padding padding\n", 40000]])
special("sparse_25mb_urdf", ["show", "big.urdf"], mentions=("big.urdf",), sparse=[["big.urdf", 25 * 2**20]])
special("path_too_long", ["show", "x" * 5000 + ".yaml"], mentions=("xxxx",))
special("path_empty", ["show", ""])
special("path_dash", ["show", "-"])
special("path_newline", ["show", "a\nb.yaml"])
special("fifo_output", ["derive", "double_pendulum", "-o", "out.txt"], "either", mentions=("out.txt",),
        fifo=["out.txt"], outputs=["out.txt"])
special("fifo_trajectory", ["torques", "arm.yaml", "--trajectory", "traj.csv"], mentions=("traj.csv",),
        fifo=["traj.csv"], write=[["arm.yaml", OK_TWO]])
special("dev_zero_trajectory", ["torques", "arm.yaml", "--trajectory", "/dev/zero"], mentions=("/dev/zero",),
        write=[["arm.yaml", OK_TWO]])

# -- command-line arguments --------------------------------------------------------------------------------------
ARM = (("models/ok_two_link.yaml", "arm.yaml"),)
SYM = (("models/ok_symbolic.yaml", "sym.yaml"),)


def cli(name: str, args: list[str], expect: str = "refuse", *, mentions: tuple[str, ...] = (), copy: tuple = ARM,
        **extra: Any) -> None:
    """An argument-list entry; an option in ``mentions`` is looked for without its dashes (``--q0``: ``q0``), so
    that ``--q0 ...: ...`` and ``field 'q0': ...`` both name it."""
    mentions = tuple(m.lstrip("-") if m.startswith("--") else m for m in mentions)
    add(f"args/{name}", args, expect, mentions=mentions, copy=copy, **extra)


for value in ("nan", "inf", "-inf", "1e999", "NaN", "infinity"):
    cli(f"param_{value}", ["simulate", "sym.yaml", "--t-end", "0.1", "--param", f"m1={value}", "--param", "l1=1",
                           "--param", "c1=0.5", "--param", "g=9.81"], mentions=("--param",), copy=SYM)
for key, item in {"unknown_name": "zz=1", "a_b_c": "m1=b=c", "empty_name": "=1", "empty_value": "m1=",
                  "no_equals": "m1", "hex": "m1=0x10", "expression": "m1=2*3", "spaces": "  =  "}.items():
    cli(f"param_{key}", ["simulate", "sym.yaml", "--t-end", "0.1", "--param", item, "--param", "l1=1", "--param",
                         "c1=0.5", "--param", "g=9.81"], mentions=("--param",), copy=SYM)
cli("param_missing", ["simulate", "sym.yaml", "--t-end", "0.1"], mentions=("m1",), copy=SYM)
cli("param_negative_mass", ["simulate", "sym.yaml", "--t-end", "0.1", "--param", "m1=-1", "--param", "l1=1",
                            "--param", "c1=0.5", "--param", "g=9.81"], "either", mentions=("mass",), copy=SYM, cost=2)
cli("param_zero_mass_singular", ["simulate", "sym.yaml", "--t-end", "0.5", "--param", "m1=0", "--param", "l1=1",
                                 "--param", "c1=0.5", "--param", "g=9.81"], "either", mentions=("mass",), copy=SYM,
    timeout=30, cost=3)
cli("param_linearize_nan", ["linearize", "sym.yaml", "--param", "m1=nan", "--param", "l1=1", "--param", "c1=0",
                            "--param", "g=1"], mentions=("--param",), copy=SYM)
cli("param_torques_inf", ["torques", "sym.yaml", "--param", "m1=inf", "--param", "l1=1", "--param", "c1=0",
                          "--param", "g=1"], mentions=("--param",), copy=SYM)
for key, q0 in {"short": "1", "long": "1,2,3", "empty": "", "words": "a,b", "nan": "nan,0", "inf": "inf,0",
                "overflow": "1e999,0", "commas": ",,,", "semicolons": "1;2"}.items():
    cli(f"q0_{key}", ["simulate", "arm.yaml", "--t-end", "0.1", "--q0", q0], mentions=("--q0",))
cli("qd0_nan", ["simulate", "arm.yaml", "--t-end", "0.1", "--qd0", "nan,nan"], mentions=("--qd0",))
cli("qd0_huge", ["simulate", "arm.yaml", "--t-end", "0.1", "--qd0", "1e300,0"], "either", mentions=("--qd0",),
    timeout=30, cost=3)
cli("q0_huge", ["simulate", "arm.yaml", "--t-end", "0.1", "--q0", "1e300,1e300"], "either", mentions=("--q0",),
    timeout=30, cost=3)
for key, extra in {"t_end_nan": ["--t-end", "nan"], "t_end_inf": ["--t-end", "inf"],
                   "t_end_negative": ["--t-end", "-1"],
                   "t_end_zero": ["--t-end", "0"], "t_end_overflow": ["--t-end", "1e999"],
                   "rtol_nan": ["--rtol", "nan"], "rtol_negative": ["--rtol", "-1"], "rtol_zero": ["--rtol", "0"],
                   "rtol_inf": ["--rtol", "inf"], "atol_nan": ["--atol", "nan"], "atol_negative": ["--atol", "-1"],
                   "samples_zero": ["--samples", "0"], "samples_negative": ["--samples", "-5"],
                   "samples_huge": ["--samples", "1000000000"], "samples_word": ["--samples", "many"],
                   "integrator_unknown": ["--integrator", "Euler"],
                   "integrator_injection": ["--integrator", "__import__('os')"],
                   "method_renamed_unknown": ["--method", "Euler"],
                   "engine_unknown": ["--engine", "fast"], "torque_unknown": ["--torque", "max"],
                   "plot_unknown_format": ["--plot", "motion.txt"], "plot_missing_dir": ["--plot", "no/motion.png"],
                   "csv_missing_dir": ["--csv", "no/run.csv"], "csv_dev_full": ["--csv", "/dev/full"],
                   "csv_is_dir": ["--csv", "."]}.items():
    mention = extra[0] if not key.startswith(("csv_dev", "engine", "torque")) else ("--engine" if key.startswith(
        "engine") else "--torque" if key.startswith("torque") else "/dev/full")
    cli(f"simulate_{key}", ["simulate", "arm.yaml", *([] if key.startswith("t_end") else ["--t-end", "0.1"]),
                            *extra], mentions=(mention,), cost=1 if key == "csv_dev_full" else 0.3,
        **({"stdout": "any"} if key == "csv_dev_full" else {}))  # the summary is printed before the CSV fails
cli("simulate_ok", ["simulate", "arm.yaml", "--t-end", "0.2", "--samples", "11", "--csv", "run.csv"], "ok",
    outputs=["run.csv"], cost=3)
cli("simulate_fifo_csv", ["simulate", "arm.yaml", "--t-end", "0.1", "--csv", "out.csv"], "either", stdout="any",
    mentions=("out.csv",), fifo=["out.csv"], outputs=["out.csv"], cost=2)
for key, extra in {"dt_nan": ["--dt", "nan"], "dt_negative": ["--dt", "-1"], "dt_zero": ["--dt", "0"],
                   "tau0_nan": ["--tau0", "nan,0"], "q0_long": ["--q0", "0,0,0"], "qd0_inf": ["--qd0", "inf,0"],
                   "measure_unknown": ["--measure", "everything"], "output_renamed": ["--output", "q"],
                   "format_unknown": ["--format", "yaml"]}.items():
    cli(f"linearize_{key}", ["linearize", "arm.yaml", *extra], mentions=(extra[0],))
cli("linearize_ok", ["linearize", "arm.yaml", "--dt", "0.01", "--format", "json"], "ok", cost=1.5)
for key, extra in {"format_unknown": ["--format", "pdf"], "method_unknown": ["--method", "magic"],
                   "form_unknown": ["--form", "weird"], "output_dev_full": ["-o", "/dev/full"],
                   "output_missing_dir": ["-o", "no/such/eq.txt"], "output_under_file": ["-o", "afile/eq.txt"],
                   "output_is_dir": ["-o", "adir"], "output_dot": ["-o", "."]}.items():
    mention = {"output_dev_full": "/dev/full", "output_missing_dir": "no/such", "output_under_file": "afile",
               "output_is_dir": "adir", "output_dot": "."}.get(key, extra[0])
    cli(f"derive_{key}", ["derive", "arm.yaml", *extra], mentions=(mention,), write=[["afile", "x"]], mkdir=["adir"],
        cost=1)
for key, extra in {"outputs_empty": ["--outputs", ""], "outputs_commas": ["--outputs", ",,"],
                   "outputs_unknown": ["--outputs", "tau,jerk"], "lang_unknown": ["--lang", "cobol"],
                   "output_dev_full": ["-o", "/dev/full"], "output_is_file": ["-o", "afile"],
                   "output_under_file": ["-o", "afile/sub"], "output_dev_null": ["-o", "/dev/null"]}.items():
    mention = {"output_dev_full": "/dev/full", "output_is_file": "afile", "output_under_file": "afile",
               "output_dev_null": "/dev/null"}.get(key, extra[0])
    cli(f"codegen_{key}", ["codegen", "arm.yaml", *extra], mentions=(mention,), write=[["afile", "x"]], cost=1)
cli("codegen_readonly_dir", ["codegen", "arm.yaml", "--outputs", "tau", "-o", "ro/gen"], "either", mentions=("ro",),
    mkdir=["ro"], chmod=[["ro", 0o555]], outputs=["ro/gen"], cost=1)
cli("codegen_ok_fortran", ["codegen", "arm.yaml", "--lang", "fortran", "--outputs", "tau,M", "-o", "gen"], "ok",
    outputs=["gen"], cost=1.5)
for key, extra in {"samples_zero": ["--samples", "0"], "samples_negative": ["--samples", "-1"],
                   "rtol_nan": ["--rtol", "nan"], "rtol_one": ["--rtol", "1"], "rtol_inf": ["--rtol", "inf"],
                   "rtol_zero": ["--rtol", "0"]}.items():
    cli(f"check_{key}", ["check", "arm.yaml", *extra], mentions=(extra[0],))
for key, extra in {"outputs_unknown": ["--outputs", "everything"], "format_latex": ["--format", "latex"],
                   "route_unknown": ["--route", "scenic"], "counting_unknown": ["--counting", "guess"],
                   "method_renamed_unknown": ["--method", "guess"]}.items():
    cli(f"count_{key}", ["count", "arm.yaml", *extra], mentions=(extra[0],))
for key, extra in {"samples_zero": ["--samples", "0"], "samples_huge": ["--samples", "1000000000"],
                   "trajectory_unknown": ["--trajectory", "zigzag"], "trajectory_missing_csv": ["--trajectory",
                                                                                             "none.csv"],
                   "trajectory_nan_csv": ["--trajectory", "nan.csv"], "trajectory_short_csv": ["--trajectory",
                                                                                            "short.csv"],
                   "trajectory_empty_csv": ["--trajectory", "empty.csv"],
                   "trajectory_text_csv": ["--trajectory", "text.csv"],
                   "trajectory_unsorted_csv": ["--trajectory", "unsorted.csv"],
                   "plot_missing_dir": ["--plot", "no/tau.png"],
                   "joint_csv_dev_full": ["--joint-csv", "/dev/full"]}.items():
    mention = {"trajectory_unknown": "zigzag", "joint_csv_dev_full": "/dev/full"}.get(key, extra[1] if "csv" in extra[1]
                                                                                       else extra[0])
    cli(f"torques_{key}", ["torques", "arm.yaml", *extra], mentions=(mention,), cost=1,
        **({"stdout": "any"} if key == "joint_csv_dev_full" else {}),
        write=[["nan.csv", "0,nan,0\n1,0,0\n2,0,0\n"], ["short.csv", "0,1\n"], ["empty.csv", ""],
               ["text.csv", "t,q1,q2\nzero,one,two\n"], ["unsorted.csv", "2,0,0\n1,0,0\n0,0,0\n"]])
for key, extra in {"threshold_nan": ["--threshold", "nan"], "threshold_negative": ["--threshold", "-1"],
                   "threshold_one": ["--threshold", "1"], "trajectory_unknown": ["--trajectory", "nowhere"],
                   "output_is_file": ["-o", "afile"]}.items():
    mention = {"trajectory_unknown": "nowhere", "output_is_file": "afile"}.get(key, extra[0])
    cli(f"simplify_{key}", ["simplify-model", "arm.yaml", *extra], mentions=(mention,), write=[["afile", "x"]], cost=1)
for key, extra in {"output_missing_dir": ["-o", "no/r.html"], "output_dev_full": ["-o", "/dev/full"],
                   "output_is_dir": ["-o", "adir"], "param_nan": ["--param", "m1=nan"]}.items():
    mention = {"output_missing_dir": "no/r.html", "output_dev_full": "/dev/full", "output_is_dir": "adir"}.get(
        key, extra[0])
    cli(f"report_{key}", ["report", "arm.yaml", "--no-check", "--no-plots", *extra], mentions=(mention,),
        mkdir=["adir"], cost=1)
cli("unknown_command", ["explode", "arm.yaml"], mentions=("explode",))
cli("no_model", ["show"], mentions=())
cli("two_models", ["show", "arm.yaml", "arm.yaml"], mentions=())
cli("unknown_option", ["show", "arm.yaml", "--verbose"], mentions=("--verbose",))
cli("model_is_option_value", ["show", "--", "--strict"], mentions=("--strict",))
cli("builtin_unknown", ["show", "puma561"], mentions=("puma561",))
cli("builtin_markup_name", ["show", "[/]"], mentions=("[/]",))
cli("help", ["--help"], "ok")
cli("no_arguments", [], "ok")
cli("show_help", ["show", "--help"], "ok")
cli("list", ["list"], "ok")


# -- issue 28: hostile classes fixed in robodyn, each with variants of our own ----------------------------------
# 1. lone surrogates (escaped in YAML and JSON) in text fields; an escaped pair is one character
SURROGATE_REPORT = ["report", "{f}", "--no-check", "--no-plots", "-o", "r.html"]
SURROGATES = {"high": "\\ud800", "low": "\\udc00", "reversed_pair": "\\udd16\\ud83e", "after_text": "abc\\udbff"}
for key, text in SURROGATES.items():
    for field in ("description", "source"):
        model(f"surrogate_{key}_{field}_yaml", OK_ONE + f'{field}: "{text}"\n', mentions=(field,),
              command=["show", "{f}"])
        model(f"surrogate_{key}_{field}_json", f'{{"name": "s", "{field}": "{text}", "links": [{json.dumps(LINK)}]}}',
              ext="json", mentions=(field,), command=SURROGATE_REPORT)
model("surrogate_name_yaml", 'name: "a\\ud800"\n' + OK_ONE.split("\n", 1)[1], mentions=("name",))
model("surrogate_description_report_yaml", OK_ONE + 'description: "\\ud800"\n', mentions=("description",),
      command=SURROGATE_REPORT)
model("surrogate_source_show_json", f'{{"name": "s", "source": "\\ud800", "links": [{json.dumps(LINK)}]}}',
      ext="json", mentions=("source",), command=["show", "{f}"])
model("surrogate_pair_yaml", OK_ONE + 'description: "\\ud83e\\udd16 robot"\nsource: "\\ud83e\\udd16"\n', expect="ok")
model("surrogate_pair_json", f'{{"name": "s", "description": "\\ud83e\\udd16", "links": [{json.dumps(LINK)}]}}',
      ext="json", expect="ok", command=SURROGATE_REPORT, outputs=["r.html"], cost=1.0)
model("surrogate_pair_report_yaml", OK_ONE + 'description: "\\ud83e\\udd16"\n', expect="ok",
      command=SURROGATE_REPORT, outputs=["r.html"], cost=1.0)
urdf("surrogate_char_ref", robot(chain(1), name="a&#xD800;b"))

# 2. trajectory CSV files: a field past csv's limit (131,072 characters), a column given twice
CSV_CASES = {
    "field_131073": "t,q1,q2\n0,0,0\n1," + "1" * 131073 + ",0\n2,0,0\n",
    "header_field_140000": "t,q1," + "q" * 140000 + "\n0,0,0\n1,0.1,0\n2,0.2,0\n",
    "blank_field_140000": "t,q1," + " " * 140000 + "0\n0,0,0\n1,0.1,0\n2,0.2,0\n",
    "duplicate_q1": "t,q1,q1\n0,0,0\n1,0,0\n2,0,0\n",
    "duplicate_t": "t,t,q1,q2\n0,0,0,0\n1,1,0.1,0\n2,2,0.2,0\n",
}
for key, text in CSV_CASES.items():
    mention = {"duplicate_q1": "'q1'", "duplicate_t": "'t'"}.get(key, "traj.csv")
    cli(f"torques_csv_{key}", ["torques", "arm.yaml", "--trajectory", "traj.csv"], mentions=("traj.csv", mention),
        write=[["traj.csv", text]], cost=1)

# 3. --param values that make a field complex, infinite or too large
P_INF = ("name: p_inf\ngravity: [0, -g, 0]\nlinks:\n"
         '  - {joint: R, a: l1, mass: "1/(l1-1)", com: [c1, 0, 0], inertia: [0.01, 0.02, 0.02]}\n')
P_COMPLEX = ('name: p_complex\ngravity: [0, -9.81, 0]\nlinks:\n'
             '  - {joint: R, a: "sqrt(l1)", mass: 1, com: [0.2, 0, 0], inertia: [0.01, 0.02, 0.02]}\n')
P_HUGE = ('name: p_huge\ngravity: [0, -9.81, 0]\nlinks:\n'
          '  - {joint: R, a: 0.5, mass: "1e18*m1", com: [0.2, 0, 0], inertia: [0.01, 0.02, 0.02]}\n')
P_OWN = ('name: p_own\ngravity: [0, -9.81, 0]\nlinks:\n'
         '  - {joint: R, a: 0.5, alpha: "sqrt(t1)", mass: 1, com: ["1/c1", 0, 0], inertia: ["1e10*i1", 0.02, 0.02]}\n')
PARAM_CASES = {
    "inf": (P_INF, ["--param", "l1=1", "--param", "c1=0.5", "--param", "g=9.81"], "mass"),
    "complex": (P_COMPLEX, ["--param", "l1=-1"], "'a'"),
    "huge": (P_HUGE, ["--param", "m1=1e20"], "mass"),
    "own_complex_alpha": (P_OWN, ["--param", "t1=-4", "--param", "c1=1", "--param", "i1=1"], "alpha"),
    "own_inf_com": (P_OWN, ["--param", "t1=1", "--param", "c1=0", "--param", "i1=1"], "com"),
    "own_huge_inertia": (P_OWN, ["--param", "t1=1", "--param", "c1=1", "--param", "i1=1e11"], "inertia"),
}
for key, (text, params, field) in PARAM_CASES.items():
    rel = write(f"models/param_{key}.yaml", text)
    for command in (["torques"], ["simulate", "--t-end", "0.05"], ["linearize"]):
        add(f"models/param_{key}_{command[0]}", [command[0], f"param_{key}.yaml", *command[1:], *params], "refuse",
            mentions=(f"param_{key}.yaml", field), copy=((rel, f"param_{key}.yaml"),), cost=1)
add("models/param_huge_report", ["report", "param_huge.yaml", "-o", "r.html", "--param", "m1=1e20"], "refuse",
    mentions=("param_huge.yaml", "mass"), copy=(("models/param_huge.yaml", "param_huge.yaml"),), cost=1)

# 5. expressions whose expansion would be too large, refused by an estimate before any expansion
BINOMIALS_30 = "*".join(f"(a{k}+b{k})" for k in range(1, 31))
for key, field, text in (("power_8_terms_64", "mass", "(a1+a2+a3+a4+a5+a6+a7+a8)**64"),
                         ("binomials_30", "mass", BINOMIALS_30),
                         ("own_degree_33", "a", "(l1+l2)**33"),
                         ("own_powers_product", "d", "(l1+l2+l3)**12*(l4+l5+l6)**12"),
                         ("own_binomials_30_com", "com", None)):
    value = json.dumps([BINOMIALS_30, 0, 0]) if text is None else json.dumps(text)
    model(f"cost_{key}", yaml_link(**{field: value}), mentions=(field if field == "com" else f"'{field}'"
                                                                 if len(field) == 1 else field,),
          command=["derive", "{f}", "-o", "eq.txt"], timeout=10, cost=1)
model("cost_binomials_6_ok", yaml_link(mass=json.dumps("*".join(f"(a{k}+b{k})" for k in range(1, 7)))), expect="ok",
      command=["derive", "{f}", "-o", "eq.txt"], outputs=["eq.txt"], timeout=30, cost=1.5)

# 6. long chains: symbolic work is limited to 20 links, the cross-check to 7 links and 10,000 samples
CHAIN_200 = (("models/ok_200_links.yaml", "chain.yaml"),)
for key, args in {"derive": ["derive", "chain.yaml", "-o", "eq.txt"],
                  "check": ["check", "chain.yaml", "--samples", "2"],
                  "simulate": ["simulate", "chain.yaml", "--t-end", "0.1"],
                  "report": ["report", "chain.yaml", "-o", "r.html"]}.items():
    cli(f"chain_200_{key}", args, mentions=("chain.yaml", "links"), copy=CHAIN_200, timeout=15, cost=2)
cli("check_samples_1000000", ["check", "double_pendulum", "--samples", "1000000"], mentions=("samples",), copy=(),
    cost=1)
cli("check_samples_10001", ["check", "double_pendulum", "--samples", "10001"], mentions=("samples",), copy=(),
    cost=1)
model("chain_21_derive", "links:\n" + "".join(f"  - {json.dumps(LINK)}\n" for _ in range(21)),
      mentions=("links", "20"), command=["derive", "{f}", "-o", "eq.txt"], timeout=15, cost=1)
model("chain_8_check", "links:\n" + "".join(f"  - {json.dumps(LINK)}\n" for _ in range(8)),
      mentions=("links", "7"), command=["check", "{f}", "--samples", "2"], timeout=15, cost=1)

# 7. plain scalars read differently by YAML 1.1 (PyYAML) and 1.2 are refused; those read alike are not
for key, field, text in (("octal_010", "a", "010"), ("sexagesimal_1_30", "mass", "1:30"),
                         ("underscore_1_000", "a", "1_000"), ("binary_0b101", "mass", "0b101"),
                         ("date_mass", "mass", "2001-12-14"), ("own_octal_0777", "a", "0777"),
                         ("own_leading_zero_08", "mass", "08"), ("own_sexagesimal_3", "mass", "190:20:30"),
                         ("own_underscore_float", "a", "1_0.5"),
                         ("own_timestamp", "mass", "2001-12-14t21:59:43.10-05:00"),
                         ("own_octal_in_com", "com", "[010, 0, 0]")):
    model(f"yaml11_{key}", yaml_link(**{field: text}), mentions=(f"'{field}'", "1.1"))
for key, field, text in (("hex_0x1F", "mass", "0x1F"), ("exponent_1e3", "mass", "1e3"),
                         ("own_octal_0o17", "mass", "0o17"), ("own_plus_point_5", "mass", "+.5"),
                         ("own_trailing_point", "mass", "1."), ("own_quoted_010_description", "description", '"010"')):
    model(f"yaml11_{key}", yaml_link(**{field: text}) if field != "description" else OK_ONE + f"{field}: {text}\n",
          expect="ok")
model("yaml11_description_yes", OK_ONE + "description: yes\n", expect="ok")
model("yaml11_own_description_off_source_on", OK_ONE + "description: off\nsource: on\n", expect="ok")

# 8. robot names that are words of the generated languages or modules: the generated files get safe names
for robot_name in ("constants", "inverse_dynamics", "num_joints", "c_double", "numpy", "math", "os",
                   "double", "main", "end", "module", "import", "class", "sin"):
    rel = write(f"models/robot_named_{robot_name}.yaml", f"name: {robot_name}\n" + OK_ONE.split("\n", 1)[1])
    langs = (("fortran", "fortran", ".f90"), ("numpy", "python", ".py"), ("c", "c", ".c"))
    for lang, check, suffix in langs if robot_name in ("double", "main", "c_double", "sin") else langs[:2]:
        add(f"models/robot_named_{robot_name}_{lang}", ["codegen", f"{robot_name}.yaml", "--lang", lang, "-o", "gen"],
            "ok", copy=((rel, f"{robot_name}.yaml"),), outputs=["gen"], checks=[check, f"created:{suffix}:1"],
            cost=1.0)
LONG_40 = "r" * 40
for lang, check, suffix in (("c", "c", ".c"), ("numpy", "python", ".py"), ("fortran", "fortran", ".f90")):
    copies = []
    for tail in ("alpha", "beta"):
        rel = f"models/name_40_{tail}.yaml"
        if rel not in written:
            write(rel, f"name: {LONG_40}_{tail}\n" + OK_ONE.split("\n", 1)[1])
        copies.append((rel, f"{tail}.yaml"))
    add(f"models/name_40_shared_prefix_{lang}", ["codegen", "beta.yaml", "--lang", lang, "-o", "gen"], "ok",
        copy=tuple(copies), run=[["codegen", "alpha.yaml", "--lang", lang, "-o", "gen"]], outputs=["gen"],
        checks=[check, f"created:{suffix}:1"], cost=1.5)

# 9. output paths holding a newline, a carriage return or an escape sequence: printed escaped, on one line
for key, args, out in (("derive_newline", ["derive", "double_pendulum", "-o"], "a\nerror: spoofed.txt"),
                       ("derive_escape", ["derive", "double_pendulum", "-o"], "b\u001b[31mred.txt"),
                       ("codegen_newline_dir", ["codegen", "double_pendulum", "-o"], "g\nerror: spoofed"),
                       ("simulate_csv_carriage_return", ["simulate", "arm.yaml", "--t-end", "0.05", "--csv"],
                        "c\rerror: spoofed.csv")):
    cli(f"output_path_{key}", [*args, out], "ok", copy=ARM if "arm.yaml" in args else (), outputs=[out],
        checks=["absent:\nerror:", "absent:\rerror:", "absent:\u001b["], cost=1.5)

# 10. very long values in errors: the error line stays short
LONG = 100_000
model("long_joint_type", yaml_link(joint="R" * LONG), mentions=("joint",), max_line=300)
model("long_convention", f"convention: {'x' * LONG}\n" + OK_ONE, mentions=("convention",), max_line=300)
model("long_own_link_key", yaml_link(**{"k" * LONG: "1"}), max_line=300)
model("long_own_top_key", OK_ONE + f"{'t' * LONG}: 1\n", max_line=300)
model("long_own_expression", yaml_link(mass=json.dumps("q" * LONG)), mentions=("mass",), max_line=300)
model("long_own_gravity_symbol", f"gravity: [0, 0, {'g' * LONG}]\n" + OK_ONE.split("\n", 2)[2], mentions=("gravity",),
      max_line=300)
P_ONE = write("models/param_one.yaml", P_HUGE.replace("p_huge", "p_one").replace("1e18*m1", "m1"))
for key, param in {"name": f"{'p' * LONG}=1", "own_value_digits": f"m1={'9' * LONG}",
                   "own_value_word": f"m1={'z' * LONG}"}.items():
    cli(f"long_param_{key}", ["simulate", "one.yaml", "--t-end", "0.05", "--param", param], mentions=("param",),
        copy=((P_ONE, "one.yaml"),), max_line=300)
cli("long_own_integrator", ["simulate", "arm.yaml", "--t-end", "0.05", "--integrator", "M" * LONG],
    mentions=("integrator",), max_line=300)
cli("long_own_model_name", ["show", "w" * LONG], max_line=300, copy=())
cli("long_own_lock", ["show", "arm.urdf", "--lock", f"{'j' * LONG}=0"], mentions=("lock",), max_line=300,
    copy=(("urdf/ok_one_joint.urdf", "arm.urdf"),))

# 11. a parameter named like a torque; the demo on a float model with general twist angles
model("param_named_tau1", "name: t1\ngravity: [0, -g, 0]\nlinks:\n  - {joint: R, a: tau1, mass: m1, com: [c1, 0, 0]}\n",
      expect="ok", command=["derive", "{f}", "-o", "eq.txt"], outputs=["eq.txt"], cost=1)
model("param_named_tau2_codegen", "name: t2\ngravity: [0, -g, 0]\nlinks:\n"
      "  - {joint: R, a: l1, mass: tau2, com: [tau1, 0, 0]}\n"
      "  - {joint: R, a: 0.4, mass: m2, com: [0.2, 0, 0]}\n", expect="ok",
      command=["codegen", "{f}", "--outputs", "tau", "-o", "gen"], outputs=["gen"], checks=["c"], cost=1.5)
model("param_own_reserved_qd1", "name: r\nlinks:\n  - {joint: R, a: 0.5, mass: qd1, com: [0.2, 0, 0]}\n",
      mentions=("mass", "qd1"))
FLOAT_TWIST = ("name: float_twist\ngravity: [0, 0, -9.81]\nlinks:\n"
               "  - {joint: R, a: 0.1, alpha: 0.7, d: 0.2, mass: 1.0, com: [0.05, 0.01, 0], "
               "inertia: [0.01, 0.02, 0.02]}\n"
               "  - {joint: R, a: 0.3, alpha: -1.1, d: 0.05, mass: 0.8, com: [0.1, 0, 0.02], "
               "inertia: [0.01, 0.015, 0.015]}\n")
model("demo_float_twist", FLOAT_TWIST, expect="ok", command=["demo", "{f}", "-o", "out"], outputs=["out"],
      checks=["c"], timeout=90, cost=8)
model("demo_own_float_prismatic", FLOAT_TWIST.replace("float_twist", "float_rp").replace(
    "{joint: R, a: 0.3", "{joint: P, theta: 0.4, a: 0.3"), expect="ok", command=["demo", "{f}", "-o", "out"],
      outputs=["out"], checks=["c"], timeout=90, cost=8)

# 12. URDF declarations and roots, MJCF and xacro files, mimic joints
urdf("decl_version_0_0", robot(chain(1)).replace('version="1.0"', 'version="0.0"'), expect="ok")
urdf("decl_after_comment", "<!-- generated -->\n" + robot(chain(1)), expect="ok")
urdf("decl_own_version_9_9_standalone", robot(chain(1)).replace('version="1.0"', 'version="9.9" standalone="yes"'),
     expect="ok")
urdf("no_link_element", robot('<joint name="j" type="fixed"/>'), mentions=("no <link>",))
urdf("no_link_own_empty_robot", robot(""), mentions=("no <link>",))
XACRO_HEAD = '<robot name="fuzz" xmlns:xacro="http://www.ros.org/wiki/xacro">'
MJCF = '<?xml version="1.0"?>\n<mujoco model="m"><worldbody/></mujoco>\n'
for name, ext, text, mention in (("robot", "xml", MJCF, "MJCF"), ("mjcf_own_as_urdf", "urdf", MJCF, "MJCF")):
    rel = write(f"urdf/{name}.{ext}", text)
    for command in (["show"], ["derive", "-o", "eq.txt"]):
        add(f"urdf/{name}_{ext}_{command[0]}", [command[0], f"{name}.{ext}", *command[1:]], "refuse",
            mentions=(f"{name}.{ext}", mention), copy=((rel, f"{name}.{ext}"),))
# xacro is expanded in process (the xacro package, in the test extra); its hostile forms are one line each
XACRO_ARM = robot(chain(1).replace('xyz="0 0 0.5"', 'xyz="0 0 ${l}"')).replace(
    '<robot name="fuzz">',
    XACRO_HEAD + '<xacro:arg name="l" default="0.5"/><xacro:property name="l" value="$(arg l)"/>')
for name, ext, text in (("arm", "xacro", XACRO_ARM),
                        ("xacro_own_in_urdf", "urdf", robot(chain(1)).replace(
                            '<robot name="fuzz">', XACRO_HEAD + '<xacro:macro name="m"/>'))):
    rel = write(f"urdf/{name}.{ext}", text)
    for command in (["show"], ["derive", "-o", "eq.txt"]):
        add(f"urdf/{name}_{ext}_{command[0]}", [command[0], f"{name}.{ext}", *command[1:]], "ok",
            copy=((rel, f"{name}.{ext}"),), outputs=command[2:])
add("urdf/arm_xacro_own_argument", ["show", "arm.xacro", "--xacro-arg", "l=0.7"], "ok",
    copy=(("urdf/arm.xacro", "arm.xacro"),))
add("urdf/arm_xacro_own_argument_without_value", ["show", "arm.xacro", "--xacro-arg", "l"], "refuse",
    mentions=("--xacro-arg 'l': expected NAME=VALUE",), copy=(("urdf/arm.xacro", "arm.xacro"),))
add("urdf/arm_xacro_own_package_path_missing", ["show", "arm.xacro", "--package-path", "nowhere"], "refuse",
    mentions=("package path 'nowhere' is not a directory",), copy=(("urdf/arm.xacro", "arm.xacro"),))
XACRO_BODY = robot(chain(1)).replace('<robot name="fuzz">', XACRO_HEAD + "{x}")
for name, inside, mention in (
        ("xacro_missing_package", '<xacro:include filename="package://nowhere/m.xacro"/>',
         "package 'nowhere' not found"),
        ("xacro_unknown_macro", "<xacro:nothere/>", "unknown macro name: xacro:nothere"),
        ("xacro_recursive_macro", '<xacro:macro name="m"><xacro:m/></xacro:macro><xacro:m/>', "nested too deeply"),
        ("xacro_undefined_argument", '<xacro:property name="p" value="$(arg nothere)"/><link name="${p}"/>',
         "Undefined substitution argument nothere"),
        ("xacro_missing_include", '<xacro:include filename="absent.xacro"/>', "absent.xacro"),
        ("xacro_fifo_include", '<xacro:include filename="pipe.xacro"/>', "is a FIFO")):
    urdf(name, XACRO_BODY.replace("{x}", inside), mentions=(mention,),
         **({"fifo": ["pipe.xacro"]} if "fifo" in name else {}))
urdf("xacro_doctype", XACRO_BODY.replace("{x}", "<xacro:m/>").replace(
    "<robot", '<!DOCTYPE robot [<!ENTITY a "b">]>\n<robot', 1), mentions=("DOCTYPE",))
urdf("root_own_unknown", robot(chain(2)), mentions=("root='l22': no such link; did you mean",),
     command=["show", "{f}", "--root", "l22"])
urdf("root_own_subtree", robot(chain(2)), expect="ok", command=["show", "{f}", "--root", "l1"])
urdf("friction_own_ignored", robot(chain(1).replace("</joint>", '<dynamics friction="0.5"/></joint>')),
     expect="ok", command=["torques", "{f}", "--friction", "ignore"], cost=1)
MIMIC_J2 = chain(2).replace('<axis xyz="0 0 1"/></joint>', '<axis xyz="0 0 1"/>{m}</joint>').replace("{m}", "", 1)
urdf("mimic_joint", robot(MIMIC_J2.replace("{m}", '<mimic joint="j1" multiplier="2" offset="0.1"/>')), expect="ok")
urdf("mimic_own_derive", robot(MIMIC_J2.replace("{m}", '<mimic joint="j1" multiplier="-1"/>')), expect="ok",
     command=["derive", "{f}", "-o", "eq.txt"], outputs=["eq.txt"], cost=1)
urdf("mimic_undefined_joint", robot(MIMIC_J2.replace("{m}", '<mimic joint="nowhere"/>')), expect="ok")
urdf("mimic_own_undefined_torques", robot(MIMIC_J2.replace("{m}", '<mimic joint="nowhere"/>')), expect="ok",
     command=["torques", "{f}"], cost=1)
urdf("mimic_own_nan_multiplier", robot(MIMIC_J2.replace("{m}", '<mimic joint="j1" multiplier="nan"/>')),
     mentions=("j2", "mimic"))


# -- issue 30: hostile loop closures (a parallelogram four-bar, then each field of its loop spoiled) -------------
FOURBAR = ("name: fourbar\ngravity: [0, -9.81, 0]\nactuated: [crank1]\nlinks:\n"
           "  - {name: crank1, joint: R, a: 2, mass: 2, com: [-1, 0, 0], inertia: [0, 0.6, 0.6]}\n"
           "  - {name: coupler, parent: crank1, joint: R, a: 1.5, mass: 2, com: [-0.75, 0, 0],\n"
           "     inertia: [0, 0.4, 0.4]}\n"
           "  - {name: crank2, parent: 0, joint: R, a: 2, mass: 2, com: [-1, 0, 0], inertia: [0, 0.6, 0.6],\n"
           "     placement: [[1, 0, 0, 1.5], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]}\nloops:\n  - ")
model("loop_parallelogram_ok", FOURBAR + "{name: bar, links: [coupler, crank2]}\n", expect="ok")
for key, loop in {"unknown_link": "{links: [coupler, nowhere]}", "itself": "{links: [coupler, coupler]}",
                  "own_parent": "{links: [coupler, crank1]}", "one_link": "{links: [coupler]}",
                  "joint_unknown": "{links: [coupler, crank2], joint: hinge}",
                  "axis_zero": "{links: [coupler, crank2], axis: [0, 0, 0]}",
                  "axis_text": "{links: [coupler, crank2], axis: [x, '__import__(1)', 0]}",
                  "placement_scaled": "{links: [coupler, crank2], placements: [[[2,0,0,0],[0,1,0,0],[0,0,1,0],"
                                      "[0,0,0,1]], null]}",
                  "placement_rpy_nan": "{links: [coupler, crank2], placements: [{rpy: [nan, 0, 0]}, null]}",
                  "not_parallelogram": "{links: [coupler, crank2], placements: [{xyz: [0.5, 0, 0]}, null]}",
                  "spatial": "{links: [coupler, crank2], axis: [1, 0, 0]}",
                  "weld": "{links: [coupler, crank2], joint: weld}",
                  "number_huge": "{links: [coupler, 99999999999999999999]}",
                  "key_unknown": "{links: [coupler, crank2], gear: 3}"}.items():
    model(f"loop_{key}", FOURBAR + loop + "\n", mentions=("loops",))
model("loop_not_actuated", FOURBAR.replace("actuated: [crank1]", "actuated: []") +
      "{links: [coupler, crank2]}\n", mentions=("actuated",))
model("loop_over_constrained", FOURBAR.replace("actuated: [crank1]", "actuated: [crank1, coupler, crank2]") +
      "{links: [coupler, crank2]}\n", mentions=("over-constrained",))

# -- issue 30: hostile URDF loop elements (Drake's <loop_joint>, URDF+'s <loop>) on a parallelogram four-bar --------
LOOP_DRAKE = ('<loop_joint name="bar" type="continuous"><link1 link="coupler" xyz="1.5 0 0" rpy="0 0 0"/>'
              '<link2 link="crank2" xyz="2 0 0" rpy="0 0 0"/><axis xyz="0 0 1"/></loop_joint>')
LOOP_PLUS = ('<loop name="bar" type="continuous"><predecessor link="coupler"><origin xyz="1.5 0 0"/></predecessor>'
             '<successor link="crank2"><origin xyz="2 0 0"/></successor><axis xyz="0 0 1"/></loop>')
FOURBAR_URDF = "\n".join([
    link("ground", ""), link("crank1"), link("coupler"), link("crank2"),
    joint("crank1", "ground", "crank1", "continuous", 'xyz="0 0 0" rpy="0 0 0"').replace(
        'type="continuous"', 'type="continuous" independent="true"'),
    joint("coupler", "crank1", "coupler", "continuous", 'xyz="2 0 0" rpy="0 0 0"'),
    joint("crank2", "ground", "crank2", "continuous", 'xyz="1.5 0 0" rpy="0 0 0"'), "{loop}"])
urdf("loop_joint_ok", robot(FOURBAR_URDF.replace("{loop}", LOOP_DRAKE)), expect="ok")
urdf("loop_plus_ok", robot(FOURBAR_URDF.replace("{loop}", LOOP_PLUS)), expect="ok",
     command=["derive", "{f}", "-o", "eq.txt"], outputs=["eq.txt"], cost=1)
for key, (old, new, mentions) in {
        "unknown_link": ('link2 link="crank2"', 'link2 link="nowhere"', ("bar", "link2", "nowhere")),
        "no_link1": ('<link1 link="coupler" xyz="1.5 0 0" rpy="0 0 0"/>', "", ("bar", "link1")),
        "link_attribute_missing": ('link2 link="crank2"', 'link2 name="crank2"', ("bar", "link2")),
        "type_screw": ('type="continuous"><link1', 'type="screw"><link1', ("bar", "type", "screw")),
        "type_missing": ('type="continuous"><link1', "><link1", ("bar", "type")),
        "name_missing": ('<loop_joint name="bar"', "<loop_joint", ("loop_joint", "name")),
        "xyz_two": ('xyz="1.5 0 0" rpy', 'xyz="1.5 0" rpy', ("bar", "link1 origin xyz")),
        "xyz_huge": ('xyz="1.5 0 0" rpy', 'xyz="1e300 0 0" rpy', ("bar", "link1 origin")),
        "rpy_nan": ('xyz="2 0 0" rpy="0 0 0"', 'xyz="2 0 0" rpy="nan 0 0"', ("bar", "link2 origin rpy")),
        "rpy_words": ('xyz="2 0 0" rpy="0 0 0"', 'xyz="2 0 0" rpy="roll pitch yaw"', ("bar", "rpy")),
        "axis_zero": ('<axis xyz="0 0 1"/></loop_joint>', '<axis xyz="0 0 0"/></loop_joint>', ("bar", "axis")),
        "axis_four": ('<axis xyz="0 0 1"/></loop_joint>', '<axis xyz="0 0 1 0"/></loop_joint>', ("bar", "axis")),
        "axis_skew": ('<axis xyz="0 0 1"/></loop_joint>', '<axis xyz="1 0 0"/></loop_joint>', ("bar", "loops")),
        "itself": ('link2 link="crank2"', 'link2 link="coupler"', ("bar", "itself")),
        "not_parallelogram": ('xyz="1.5 0 0" rpy', 'xyz="1 0 0" rpy', ("bar", "parallelogram")),
        "duplicate_name": ("</loop_joint>", "</loop_joint>" + LOOP_DRAKE, ("bar", "two loops")),
        "unmarked": (' independent="true"', "", ("actuated",)),
        "not_actuated": (' independent="true"', ' independent="false"', ("actuated",)),
        "base_loop": ('link2 link="crank2"', 'link2 link="ground"', ("bar",)),
}.items():
    loop = LOOP_DRAKE.replace(old, new, 1)  # the loop spoiled; else the rest of the file
    text = robot(FOURBAR_URDF.replace("{loop}", loop) if loop != LOOP_DRAKE else
                 FOURBAR_URDF.replace(old, new, 1).replace("{loop}", LOOP_DRAKE))
    assert old in LOOP_DRAKE + FOURBAR_URDF and text != robot(FOURBAR_URDF.replace("{loop}", LOOP_DRAKE)), key
    urdf(f"loop_joint_{key}", text, mentions=mentions)
for key, (old, new, mentions) in {
        "no_successor": ("successor", "follower", ("bar", "successor")),
        "origin_nan": ('<origin xyz="2 0 0"/>', '<origin xyz="nan 0 0"/>', ("bar", "successor origin xyz")),
        "unknown_link": ('predecessor link="coupler"', 'predecessor link="nowhere"', ("bar", "nowhere")),
}.items():
    assert old in LOOP_PLUS, key
    urdf(f"loop_plus_{key}", robot(FOURBAR_URDF.replace("{loop}", LOOP_PLUS.replace(old, new))), mentions=mentions)
urdf("loop_joint_many", robot(FOURBAR_URDF.replace("{loop}", "".join(
    LOOP_DRAKE.replace('name="bar"', f'name="bar{k}"') for k in range(300)))), mentions=("loops",))


# -- issue 43: hostile MJCF (special files as the model, an include or a mesh; size bombs; numbers not finite;
# passive elements and scenes) --------------------------------------------------------------------------------------
def _mjcf_entries() -> None:
    """MJCF files, each refused in one line naming the file (or the include) and the problem, or read: made
    at run time where a FIFO, a device or a sparse file is the point, else corpus files under ``mjcf/``."""
    geom = '<geom type="sphere" size="0.1" mass="1"/>'
    arm = f'<body name="upper" pos="0 0 0.5"><joint name="j1" axis="0 1 0" damping="0.1"/>{geom}</body>'

    def text(body: str = arm, head: str = "") -> str:
        return f'<mujoco model="fuzz">{head}<worldbody>{body}</worldbody></mujoco>\n'

    def mjcf(name: str, content: str, expect: str = "refuse", *, mentions: tuple[str, ...] = (),
             command: tuple[str, ...] = ("show",), **setup: Any) -> None:
        rel = write(f"mjcf/{name}.xml", content)
        add(f"mjcf/{name}", [command[0], f"{name}.xml", *command[1:]], expect,
            mentions=((f"{name}.xml",) if expect == "refuse" else ()) + mentions, copy=((rel, f"{name}.xml"),),
            **setup)

    special("fifo_mjcf", ["show", "arm.xml"], mentions=("arm.xml", "FIFO"), fifo=["arm.xml"])
    special("dev_zero_link_mjcf", ["show", "zero.xml"], mentions=("zero.xml", "character device"),
            symlink=[["/dev/zero", "zero.xml"]])
    special("sparse_30mb_mjcf", ["show", "big.xml"], mentions=("big.xml", "larger than"),
            sparse=[["big.xml", 30 * 2**20]])
    mjcf("include_fifo", text(head='<include file="part.xml"/>'), mentions=("part.xml", "FIFO"), fifo=["part.xml"])
    mjcf("include_dev_zero", text(head='<include file="zero.xml"/>'), mentions=("zero.xml", "character device"),
         symlink=[["/dev/zero", "zero.xml"]])
    mjcf("include_directory", text(head='<include file="part.xml"/>'), mentions=("part.xml", "directory"),
         mkdir=["part.xml"])
    mjcf("include_itself", text(head='<include file="include_itself.xml"/>'), mentions=("nested",))
    mjcf("mesh_fifo", text('<body><joint name="j"/><geom type="mesh" mesh="m"/></body>',
                           '<asset><mesh name="m" file="shape.stl"/></asset>'), mentions=("shape.stl", "FIFO"),
         fifo=["shape.stl"])
    mjcf("texture_dev_zero", text(head='<asset><texture name="t" type="2d" file="zero.png"/></asset>'),
         mentions=("zero.png", "character device"), symlink=[["/dev/zero", "zero.png"]])
    mjcf("replicate_million", text(f'<replicate count="1000" offset="1 0 0"><replicate count="1000" '
                                   f'offset="0 1 0">{arm.replace(" name=", " n=")}</replicate></replicate>'),
         mentions=("10000 bodies",))
    mjcf("replicate_billion", text(f'<replicate count="1000000000" offset="1 0 0">{geom}</replicate>'
                                   f'<replicate count="1000000000" offset="1 0 0"><body>{geom}</body></replicate>'),
         mentions=("bodies",))
    mjcf("nested_deep", text("<body>" * 5000 + "</body>" * 5000), mentions=("nested more than",))
    mjcf("entity", '<!DOCTYPE m [<!ENTITY a "aaaaaaaaaa">]>\n' + text(), mentions=("entity",))
    for key, (old, new) in {"damping_nan": ('damping="0.1"', 'damping="nan"'),
                            "pos_inf": ('pos="0 0 0.5"', 'pos="0 inf 0.5"'),
                            "mass_overflow": ('mass="1"', 'mass="1e999"'),
                            "axis_minus_infinity": ('axis="0 1 0"', 'axis="0 -Infinity 0"')}.items():
        mjcf(f"not_finite_{key}", text(arm.replace(old, new)), mentions=("not finite", new.split("=")[0]))
    mjcf("passive_everything", text(arm.replace('damping="0.1"', 'stiffness="3" damping="0.1"').replace(
        '<body name="upper"', '<body name="upper" gravcomp="1"'), '<option density="1000" viscosity="0.001"/>'),
         mentions=("body gravcomp 'upper'", "fluid forces"))  # (the hinge's spring is read)
    free = '<body name="{0}" pos="{1} 0 1"><freejoint/>{2}<body name="{0}_arm"><joint name="{0}_j"/>{2}</body></body>'
    mjcf("two_floating_robots", text(free.format("a", 0, geom) + free.format("b", 2, geom)),
         mentions=("2 robots", "root="))
    prop = '<body name="cube" pos="1 0 0"><joint type="free" damping="0.3" frictionloss="0.1"/>{0}</body>'
    mjcf("scene_with_prop", text(arm + prop.format(geom)), "ok")
    mjcf("scene_in_air", text(arm + prop.format(geom), '<option density="1.2" viscosity="0.00002"/>'), "ok",
         command=("torques", "--csv", "tau.csv"), outputs=["tau.csv"], cost=1)
    mjcf("frictionloss_coulomb", text(arm.replace('damping="0.1"', 'damping="0.1" frictionloss="0.4"')), "ok",
         command=("derive", "-o", "eq.txt"), outputs=["eq.txt"], cost=1)


_mjcf_entries()


def _hardening_entries() -> None:
    """Issue 43, the surfaces added since the last hardening: wrong YAML types in ``loops:`` and ``couplings:``
    (one line naming the loop or coupling and the field, link numbers from 1), special files among ``robodyn
    batch`` models and unknown Dask scheduler addresses (refused before anything is opened or started), ``--q0`` of
    nq coordinates, and the five-bar's default trajectory and far-off start."""
    def fivebar(loop: str) -> str:
        return (FIVEBAR_HEAD + "actuated: [crank1, crank2]\nloops:\n  - " + loop + "\n")

    for key, (loop, mentions) in {
            "joint_list": ("{name: lower, links: [rod1, rod2], joint: [revolute]}", ("lower", "joint")),
            "joint_mapping": ("{name: lower, links: [rod1, rod2], joint: {revolute: 1}}", ("lower", "joint")),
            "name_list": ("{name: [], links: [rod1, rod2]}", ("loop 1", "name")),
            "links_number": ("{name: lower, links: 5}", ("lower", "links")),
            "links_name_mapping": ("{name: lower, links: [{rod1: 1}, rod2]}", ("lower", "links")),
            "link_past_the_last": ("{name: lower, links: [9, rod2]}", ("lower", "9 is not a link number (1 to 4")),
            "placements_string": ("{name: lower, links: [rod1, rod2], placements: abc}", ("lower", "placements")),
            "placement_number": ("{name: lower, links: [rod1, rod2], placements: [5, null]}",
                                 ("lower", "placements[0]")),
            "axis_mapping": ("{name: lower, links: [rod1, rod2], axis: {x: 1}}", ("lower", "axis")),
            "reference_base": ("{name: lower, links: [rod1, rod2], reference: {0: 0.1}}",
                               ("lower", "reference", "0 is the base")),
            "reference_list": ("{name: lower, links: [rod1, rod2], reference: [1, 2]}", ("lower", "reference")),
            "branch_list": ("{name: lower, links: [rod1, rod2], branch: [1]}", ("lower", "branch")),
    }.items():
        model(f"loops_{key}", fivebar(loop), mentions=("loops", *mentions), command=["show", "{f}"])
    model("loops_entry_number", FIVEBAR_HEAD + "actuated: [crank1, crank2]\nloops: [5]\n",
          mentions=("loops", "loop 1"), command=["show", "{f}"])
    coupled = OK_TWO + "  - " + json.dumps(LINK2) + "\ncouplings:\n  - "
    for key, (coupling, mentions) in {
            "joint_past_the_last": ("{joint: 5, leader: 2}", ("coupling 1", "5 is not a link number (1 to 3)")),
            "ratio_list": ("{joint: 3, leader: 2, ratio: [1]}", ("coupling 1 (joint 3)", "ratio")),
            "offset_mapping": ("{joint: 3, leader: 2, offset: {a: 1}}", ("coupling 1 (joint 3)", "offset")),
            "leaders_list": ("{joint: 3, leaders: [2]}", ("coupling 1 (joint 3)", "leaders")),
            "follows_itself": ("{joint: 3, leader: 3}", ("joint 3 cannot follow itself",)),
    }.items():
        model(f"couplings_{key}", coupled + coupling + "\n", mentions=("couplings", *mentions),
              command=["show", "{f}"])
    for key, setup in {"fifo": {"fifo": ["robot.yaml"]}, "directory": {"mkdir": ["robot.yaml"]},
                       "dev_null": {"symlink": [["/dev/null", "robot.yaml"]]}}.items():
        special(f"batch_{key}", ["batch", "robot.yaml", "-O", "tau", "-l", "c", "-o", "cat"],
                mentions=("robot.yaml", "not a regular file"), exit=1, stdout="any", kept=["cat"], timeout=60,
                **setup)
    for key, (address, mentions) in {"scheme": ("foo://host:8786", ("unknown scheme 'foo'",)),
                                     "port": ("tcp://host:port", ("the port 'port' is not a number",)),
                                     "no_port": ("host", ("missing port",)),
                                     "inproc": ("inproc://x", ("unknown scheme 'inproc'",))}.items():
        cli(f"batch_scheduler_{key}", ["batch", "two_link_fu", "-O", "tau", "-o", "cat", "--scheduler", address],
            mentions=("scheduler address", *mentions), copy=(), timeout=60)
    ball = write("models/ball_joint.yaml", BALL)
    cli("simulate_q0_nq", ["simulate", "ball.yaml", "--q0", "0,0,0.0499792,0.99875,0.3", "--t-end", "0.01"], "ok",
        stdout="any", copy=((ball, "ball.yaml"),), timeout=60)
    cli("simulate_q0_nv_for_nq", ["simulate", "ball.yaml", "--q0", "0,0,0,1"], mentions=("--q0", "expected 5"),
        copy=((ball, "ball.yaml"),))
    cli("linearize_q0_nq", ["linearize", "ball.yaml", "--q0", "0,0,0,1,0.3"], mentions=("spherical joint",),
        copy=((ball, "ball.yaml"),))
    cli("torques_fivebar", ["torques", "fivebar", "--csv", "tau.csv"], "ok", stdout="any", outputs=["tau.csv"],
        copy=(), timeout=60)
    cli("simulate_fivebar_off_its_workspace", ["simulate", "fivebar", "--q0", "3,0", "--t-end", "0.1"],
        mentions=("fivebar",), copy=(), timeout=60)


#: The built-in five-bar's links (its loop given by each entry of :func:`_hardening_entries`).
FIVEBAR_HEAD = """name: fivebar_fuzz
convention: standard
gravity: [0, -9.81, 0]
links:
  - {name: crank1, joint: R, a: 2, alpha: 0, theta: -pi/2, mass: 2, com: [-1, 0, 0], inertia: [0, 2/3, 2/3],
     placement: [[1, 0, 0, -1], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]}
  - {name: rod1, parent: crank1, joint: R, a: 2, alpha: 0, theta: pi/6, mass: 2, com: [-1, 0, 0],
     inertia: [0, 2/3, 2/3]}
  - {name: crank2, parent: base, joint: R, a: 2, alpha: 0, theta: -pi/2, mass: 2, com: [-1, 0, 0],
     inertia: [0, 2/3, 2/3], placement: [[1, 0, 0, 1], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]}
  - {name: rod2, parent: crank2, joint: R, a: 2, alpha: 0, theta: -pi/6, mass: 2, com: [-1, 0, 0],
     inertia: [0, 2/3, 2/3]}
"""
#: A spherical joint then a revolute one: nq 5 (the quaternion x, y, z, w, then q2), nv 4.
BALL = """name: ball
gravity: [0, 0, -9.81]
links:
  - {joint: S, a: 0, alpha: 0, mass: 1, com: [0, 0, -0.3], inertia: [0.01, 0.02, 0.02]}
  - {joint: R, a: 0.4, alpha: 0, mass: 0.8, com: [0.2, 0, 0], inertia: [0.01, 0.015, 0.015]}
"""


_hardening_entries()


def files() -> dict[str, bytes]:
    """Corpus-relative path -> bytes of every corpus file, the manifest included."""
    manifest = (json.dumps(entries, indent=1, ensure_ascii=True) + "\n").encode("ascii")
    return {**written, "manifest.json": manifest}


def main() -> None:
    if CORPUS.exists():
        shutil.rmtree(CORPUS)
    for rel, data in sorted(files().items()):
        path = CORPUS / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    kinds: dict[str, int] = {}
    for entry in entries:
        kinds[entry["id"].split("/")[0]] = kinds.get(entry["id"].split("/")[0], 0) + 1
    print(f"{len(entries)} entries ({', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))}), "
          f"{len(written)} corpus files")


if __name__ == "__main__":
    main()
