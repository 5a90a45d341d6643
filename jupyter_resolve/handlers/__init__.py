"""HTTP adapters: parse into a model, call one service, answer. Routes at the bottom of each."""
