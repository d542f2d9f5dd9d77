"""Configuration: nothing positional is computed here, though the words appear in **docs**.

`rope_theta` is the base of the `inv_freq` computation `1 / theta ** (arange(0, d, 2) / d)`.
"""


class LlamaLikeConfig:
    model_type = "llama_like"

    def __init__(self, vocab_size=32000, hidden_size=4096, num_attention_heads=32, rope_theta=10000.0,
                 max_position_embeddings=2048, **kwargs):
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size
        self.num_attention_heads = num_attention_heads
        self.rope_theta = rope_theta
        self.max_position_embeddings = max_position_embeddings
        # head_dim ** 2 is never needed here
        self.extra = dict(**kwargs)
        self.scale = (hidden_size // num_attention_heads) ** -0.5

    def to_dict(self):
        return {k: v for k, v in self.__dict__.items()}
