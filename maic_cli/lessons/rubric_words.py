"""Word lists of the rubric measure (lessons/rubric.py): stop words, markers, negations, synonyms.

Kept apart from the measure so the lists can be read and extended on their own.  Words are
written plainly; the measure stems them (Snowball) when it is built.  English only: a rubric in
another language is measured with its own stemmer and no stop words or synonyms, so its points
are its words (a looser measure, and more answers are left to the model's range).
"""

from __future__ import annotations

# Words that carry no content of their own (articles, pronouns, auxiliaries, connectives).
STOP_WORDS = frozenset("""
a about above across after again against all along also am among an and any are around as at be because
been before being below between both but by can could did do does doing done down during either else etc ever
for from further had has have having he her here hers herself him himself his how however i if in
into is it its itself just let like may me might mine most much must my myself
neither nor now of off often on once one only onto or other ought our ours ourselves out over own
per perhaps quite rather really same say says each every shall she should since so some something such than
that the their theirs them themselves then there these they thing things this those though through
throughout thus to too toward towards under until up upon us very via was we were what whatever when where whether which
while who whom whose why will with within would yes yet you your yours yourself
""".split())

# Verbs that stand between a word and the negation that is about it ("gravity does not act").
AUXILIARIES = frozenset("am is are was were be been being do does did has have had will would can could shall "
                        "should may might must".split())

# Words that describe the answer rather than the subject ("mentioning energy is essential").
META_WORDS = frozenset("""
answer answers answering bonus credit essential extra full good key learner learners mark marks mention
mentioned mentioning mentions name naming names needed optional plus point points required requirement
said saying say stated stating state states student students talk talking wording write writing written
important crucial must necessary required also should correct right idea explain explaining explains
explanation note noting notes reference referring refers give gives giving partial sentence sentences
""".split()) - {"name", "names"}  # "it can be named anything" is content: named is handled by the marker cut

# A sentence of the rubric with one of these says its point is essential, or a bonus.
ESSENTIAL_MARKERS = ("essential", "must", "required", "requires", "need to", "needs to", "key point",
                     "the key", "crucial", "important", "at least", "main point", "has to", "have to")
BONUS_MARKERS = ("bonus", "extra credit", "optional", "nice to have", "for extra", "a plus", "earns extra")

# Words that undo the term after them (within a few words, in the same clause).
NEGATIONS = frozenset({"not", "no", "never", "without", "nothing", "none", "neither", "nor", "cannot",
                       "isnt", "arent", "doesnt", "dont", "didnt", "wont", "cant", "hasnt", "havent",
                       "wasnt", "werent", "shouldnt", "wouldnt", "couldnt", "nobody", "nowhere"})
NEGATION_REACH = 3  # words after a negation that it undoes
# A sentence that opens with one of these imagines the opposite ("without light there is no energy"):
# its negations are not the learner denying a term.
COUNTERFACTUAL_OPENERS = ("without", "if there were no", "if there was no", "if there is no", "if it were not",
                          "if not for")

# Words a learner may use for a rubric's word: each group is one meaning (stemmed when built).
# Kept to meanings that lessons at school level share; a group never mixes a word with its opposite.
SYNONYM_GROUPS: tuple[tuple[str, ...], ...] = (
    ("change", "changes", "changing", "varies", "vary", "different", "new", "next", "update", "updates",
     "becomes", "moves", "shifts", "advances", "replaced"),
    ("repetition", "repeat", "repeats", "pass", "passes", "iteration", "iterations", "time", "times", "round",
     "cycle", "step", "run", "runs", "loop", "loops"),
    ("energy", "power", "fuel"),
    ("item", "element", "value", "entry", "member", "object"),
    ("collection", "list", "sequence", "array", "group", "iterable"),
    ("make", "makes", "produce", "produces", "create", "creates", "build", "builds", "form", "forms",
     "generate", "generates", "manufacture"),
    ("food", "sugar", "sugars", "glucose", "carbohydrate"),
    ("sun", "sunlight", "sunshine"),
    ("hold", "holds", "store", "stores", "contain", "contains", "keep", "keeps", "carry", "carries"),
    ("named", "called", "labelled", "labeled"),
    ("anything", "whatever", "any"),
    ("big", "large", "huge", "great"),
    ("small", "tiny", "little"),
    ("fast", "quick", "quickly", "rapid", "rapidly", "speed"),
    ("increase", "increases", "rise", "rises", "grow", "grows", "growth"),
    ("decrease", "decreases", "fall", "falls", "drop", "drops", "shrink", "shrinks"),
    ("more", "higher", "greater", "larger", "bigger"),
    ("less", "lower", "fewer", "smaller", "least"),
    ("cause", "causes", "lead", "leads", "result", "results", "drive", "drives", "trigger"),
    ("need", "needs", "require", "requires", "depend", "depends"),
    ("use", "uses", "using", "consume", "consumes", "utilise", "utilize"),
    ("absorb", "absorbs", "capture", "captures", "catch", "catches", "collect", "collects", "trap", "traps"),
    ("release", "releases", "emit", "emits", "exhale", "expel", "expels"),
    ("begin", "begins", "start", "starts"),
    ("end", "ends", "finish", "finishes", "stop", "stops"),
    ("equal", "equals", "identical", "same"),
    ("add", "adds", "sum", "total", "plus"),
    ("reaction", "process", "conversion"),
    ("turn", "turning", "convert", "converts", "converting", "transform", "transforms"),
    ("plant", "plants", "leaf", "leaves", "tree", "trees"),
    ("water", "h2o"),
    ("carbon", "co2"),
    ("oxygen", "o2"),
    ("heat", "warmth", "hot", "warm"),
    ("cold", "cool", "chilly"),
    ("move", "moves", "motion", "movement"),
    ("force", "push", "pull"),
    ("pump", "pumps", "pumping", "push", "pushes", "circulate", "circulates"),
    ("number", "numbers", "integer", "integers", "count"),
    # Added for answers in the learner's own words (tests/benchmarks/paraphrase_set.yaml).
    ("part", "parts", "piece", "pieces", "slice", "slices", "portion", "portions", "share", "shares", "section",
     "sections", "segment", "segments"),
    ("spread", "spreads", "spreading", "scatter", "scatters", "distribute", "distributes", "cover", "covers",
     "covering"),
    ("angle", "angles", "slant", "slanted", "slanting", "slope", "sloped", "tilt", "tilted", "oblique", "shallow"),
    ("area", "areas", "surface", "patch", "region", "ground", "land"),
    ("low", "lower", "shallow"),
    ("divide", "divides", "divided", "split", "splits", "cut", "cuts", "cutting"),
    ("wide", "wider", "broad", "broader"),
    # Number words and their digits: "three equal parts" says what "3 equal parts" says.
    ("two", "2", "twice", "double"),
    ("three", "3", "thrice", "triple"),
    ("four", "4"),
    ("five", "5"),
    ("six", "6"),
    ("seven", "7"),
    ("eight", "8"),
    ("nine", "9"),
    ("ten", "10"),
    ("twelve", "12", "dozen"),
    ("hundred", "100"),
    ("thousand", "1000"),
    ("half", "halves", "halve", "halved"),
    ("third", "thirds"),
    ("quarter", "quarters", "fourth", "fourths"),
)
