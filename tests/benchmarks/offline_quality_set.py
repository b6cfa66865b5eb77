"""The questions and answers tests/benchmarks/offline_quality.py plays: free questions, questions
asked during the built-in lessons (at the slide whose content answers them), questions outside
the lessons, and right and wrong short answers to grade."""

QUESTIONS = [
    "Why do we have seasons?",
    "How does a vaccine teach the body to fight a virus?",
    "What is the difference between weather and climate?",
    "Why does ice float on water?",
    "How do plants make food from sunlight?",
    "What does a fraction like 3/4 actually mean?",
]
# (lesson, slide scene id it is asked at, question); the answer is in the lesson
LESSON_QUESTIONS = [
    ("photosynthesis", "needs", "Where does a tree's mass come from?"),
    ("photosynthesis", "needs", "What does a plant need to make its food?"),
    ("photosynthesis", "equation", "What gas do plants give off?"),
    ("photosynthesis", "equation", "Where in the cell does photosynthesis happen?"),
    ("fractions", "parts", "What does the bottom number of a fraction mean?"),
    ("fractions", "same_amount", "Is 2/4 the same as 1/2?"),
    ("fractions", "adding", "How do I add 1/5 and 2/5?"),
    ("seasons", "distance", "Is it summer because Earth is closer to the Sun?"),
    ("seasons", "tilt", "How much is Earth's axis tilted?"),
    ("seasons", "sunlight", "Why does winter sunlight heat the ground less?"),
    ("seasons", "calendar", "What happens at an equinox?"),
]
OUTSIDE = [
    ("photosynthesis", "needs", "Why is the sky blue?"),
    ("fractions", "parts", "Is zero an even number?"),
    ("seasons", "tilt", "How does a for loop work in Python?"),
]
# (lesson, quiz question id, answer, right?)
GRADING = [
    ("photosynthesis", "q3", "Light gives the plant the energy to turn carbon dioxide and water into glucose.", True),
    ("photosynthesis", "q3", "Plants use the energy of light to make their food, a sugar.", True),
    ("photosynthesis", "q3", "Plants need light so that they stay warm at night.", False),
    ("photosynthesis", "q3", "Because the soil is dark.", False),
    ("fractions", "q4", "The same pizza cut into 3 equal parts has bigger slices than cut into 4.", True),
    ("fractions", "q4", "Fewer equal pieces of the same pizza means each piece is bigger.", True),
    ("fractions", "q4", "Because 4 is bigger than 3.", False),
    ("fractions", "q4", "A quarter is more because four is more than three.", False),
    ("seasons", "q4", "The Sun is lower in winter, so its light hits the ground at a slant and spreads out.", True),
    ("seasons", "q4", "Low winter sun spreads the same light over more ground, so each square metre gets less.", True),
    ("seasons", "q4", "Because Earth is farther from the Sun in winter.", False),
    ("seasons", "q4", "Because the Sun gives off less heat in winter.", False),
]
