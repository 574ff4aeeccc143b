"""The MongoDB Atlas backend of the knowledge store (the conversation store is bot/conversations/mongo.py).

Written with pymongo's native async client; `bridge.AsyncBridge` runs it for the synchronous store protocols.
"""
