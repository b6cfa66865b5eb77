"""The LLM port (``port``) and its implementations; ``factory.make_llm`` picks one by model spec.

litellm (``litellm_client``), the thin OpenAI-compatible client (``direct``), a litellm Router
(``router``), the offline model (``local``) and the fakes (``scripted``, ``replay``, ``demo``);
``spec`` reads a model string once (where the user gave it; the spec is passed on), ``recording``
holds the one record of a call, ``pool`` shares clients across a batch.  Nothing is imported
here: a caller imports the module it needs, so a light command loads no client.
"""
