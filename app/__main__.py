def main():\n    print("hi")
