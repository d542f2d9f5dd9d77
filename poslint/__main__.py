from poslint.cli import main

main()
