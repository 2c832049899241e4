"""Talking to a model's server: the client, the connection test and the model list
(`connection`), each kind of endpoint's profile (`profiles`: local or cloud, timeouts,
tools, DeepSeek's thinking), what an API error means in words (`api_errors`) and the
retirement dates providers announce (`shutdown`)."""
