"""Multi-turn rollouts: an episode is a conversation between the policy and an environment
(tools it calls, feedback it answers), scored as a whole by the environment's rubric.

The environment contract (built-ins and Python code alike): given the conversation so far (a
list of chat messages, the assistant's tool calls parsed into `tool_calls`) and the dataset row,
answer the next environment message(s), or None when the episode is done (replies.py).
"""
