"""The compiler as lists of named passes (`passes`), what each runs (`stages`), the driver
(`driver`), and the core form as text after any pass (`listing`).
"""
