"""The LLM port (``port``) and its implementations; ``factory.make_llm`` picks one by model string.

litellm (``litellm_client``), the thin OpenAI-compatible client (``direct``), a litellm Router
(``router``), the offline model (``local``) and the fakes (``scripted``, ``replay``, ``demo``);
``spec`` reads a model string once, ``pool`` shares clients across a batch.  Nothing is imported
here: a caller imports the module it needs, so a light command loads no client.
"""
