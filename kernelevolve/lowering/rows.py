"""stub"""
EMITTERS: dict = {}
