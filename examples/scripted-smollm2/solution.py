n = int(input())
values = input().split()
print(len(set(values)))
