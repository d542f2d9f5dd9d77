"""A tokenizer: **bold** Markdown, `**kwargs`, strings that look like code."""
import re

EXAMPLE = '''
inv_freq = 1.0 / (10000 ** (torch.arange(0, 64, 2) / 64))
t = torch.arange(8192, dtype=torch.bfloat16)
freqs = torch.outer(t, inv_freq)
'''


class LikeTokenizer:
    pattern = re.compile(r"\w+|[^\w\s]+")

    def __init__(self, vocab, **kwargs):
        self.vocab = vocab
        self.options = {**kwargs}

    def tokenize(self, text, **kwargs):
        return self.pattern.findall(text)  # "**" is a token too

    def __call__(self, text, *args, **kwargs):
        return [self.vocab.get(t, 0) for t in self.tokenize(text, **kwargs)]
