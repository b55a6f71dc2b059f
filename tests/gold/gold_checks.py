"""What the gold-set tests share: DESIGN §4 by intent, and the content words of a query."""

from __future__ import annotations

from tooldisc.discovery.text import tokenize

# Intent "none" (no-match) counts as read.
INTENT_ALLOWS = {
    "read": {"none"},
    "none": {"none"},
    "write": {"none", "write"},
    "delete": {"none", "delete"},
    "export": {"none", "export"},
    "execute": {"none", "execute"},
}
# The side effect a query's primary tools must carry for each intent (at least one).
INTENT_PRIMARY = {
    "read": {"none"},
    "write": {"write"},
    "delete": {"delete"},
    "export": {"export"},
    "execute": {"execute"},
}

# Words that do not count when checking that a query shares no content word with its tools.
STOPWORDS = {
    # English
    "a", "an", "the", "and", "or", "of", "to", "for", "in", "on", "at", "by", "with", "from",
    "is", "are", "was", "be", "it", "this", "that", "these", "those", "my", "me", "i", "we",
    "our", "you", "your", "all", "any", "some", "what", "which", "who", "how", "can", "do",
    "does", "did", "please", "pls", "get", "show", "list", "give", "let", "s", "t", "as",
    "up", "out", "into", "about", "there", "have", "has", "not", "no", "one", "new", "he", "she",
    "his", "her", "they", "them", "their", "much", "many", "would", "will", "just", "only",
    # Persian
    "و", "در", "به", "از", "که", "این", "آن", "را", "با", "برای", "تا", "یا", "هم", "رو",
    "من", "ما", "شما", "یک", "یه", "همه", "چه", "چی", "کدام", "کدوم", "است", "هست", "بود",
    "کن", "کنید", "بده", "بدید", "لطفا", "لطفاً", "نشان", "نمایش", "بگو", "های", "ها", "ی",
    "اون", "اینو", "اونو", "هر", "بر", "دیگه", "جدید", "چقدر", "چند", "شده", "شد", "کردن",
    "نه", "فقط", "می", "باید",
}


def content_words(text: str) -> set[str]:
    return {tok for tok in tokenize(text) if tok not in STOPWORDS and not tok.isdigit()}
