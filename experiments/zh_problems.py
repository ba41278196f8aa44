"""Chinese maths word problems written from templates: a benchmark in a script without spaces.

No Chinese benchmark can be installed on the machines these experiments run on (the Hub is out of
reach and no package ships one), so this writes one: eight templates of GSM8K-like problems with
names, things and numbers drawn with a seed. Every problem is distinct. It is a hard case for
familiarity: a model trained on some of them knows every template of the others.

    python experiments/zh_problems.py 5        # print five
"""

from __future__ import annotations

import random
import sys

NAMES = [
    "小明", "小红", "小刚", "小丽", "王老师", "李阿姨", "张叔叔", "小华", "小军", "小芳", "刘奶奶", "陈先生",
    "赵同学", "孙爷爷", "周阿姨", "吴老师",
]  # fmt: skip
THINGS = [
    ("苹果", "个"), ("铅笔", "支"), ("故事书", "本"), ("橘子", "个"), ("邮票", "张"), ("气球", "个"),
    ("糖果", "颗"), ("小鱼", "条"), ("练习本", "本"), ("贴纸", "张"),
]  # fmt: skip
TEMPLATES = [
    "{a}有{x}{u}{t}，给了{b}{y}{u}，又买了{z}{u}。请问{a}现在有多少{u}{t}？",
    "{a}的商店每天卖出{x}{u}{t}，每{u}{t}的价格是{y}元。{z}天一共能卖多少钱？",
    "学校买了{x}{u}{t}，平均分给{y}个班，每个班还要再发{z}{u}。每个班一共分到多少{u}{t}？",
    "{a}和{b}一共收集了{x}{u}{t}，{a}比{b}多{y}{u}。后来{b}又收集了{z}{u}，{b}现在有多少{u}？",
    "一箱{t}有{x}{u}，{a}买了{y}箱，路上坏了{z}{u}。{a}还剩多少{u}{t}可以分给同学？",
    "{a}每天看{x}页书，看了{y}天以后还剩{z}页没有看。这本书一共有多少页？",
    "工厂第一天生产了{x}{u}{t}，第二天比第一天多生产{y}{u}，第三天生产了{z}{u}。三天一共生产了多少{u}？",
    "{a}把{x}{u}{t}装进盒子里，每个盒子装{y}{u}，装完后又收到{z}{u}。{a}一共需要多少个盒子？",
]


def problems(count: int, seed: int = 0) -> list[str]:
    """``count`` distinct problems, the same for the same seed."""
    rng = random.Random(seed)
    out: dict[str, None] = {}
    while len(out) < count:
        thing, unit = rng.choice(THINGS)
        a, b = rng.sample(NAMES, 2)
        numbers = {"x": rng.randint(12, 480), "y": rng.randint(11, 95), "z": rng.randint(13, 250)}
        out[rng.choice(TEMPLATES).format(a=a, b=b, t=thing, u=unit, **numbers)] = None
    return list(out)


if __name__ == "__main__":
    print("\n".join(problems(int(sys.argv[1]) if len(sys.argv) > 1 else 10)))
